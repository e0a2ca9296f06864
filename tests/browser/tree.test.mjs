// The web UI in a real browser, the way a person uses it: the tree updates live while the mock
// model runs, approving at the gate from the page starts the specs, a code loop's page shows its
// diff and (when opened) an iteration's transcript. Screenshots go to LOOPR_BROWSER_OUT.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import * as h from './harness.mjs';

let browser;
let repo;
let web;

before(async () => {
  browser = await h.launchBrowser();
  repo = await h.makeRepo(h.treeScript({ specs: ['alpha', 'beta'], planDelayMs: 2500, delayMs: 300 }));
  web = h.startWeb(repo);
});

after(async () => {
  await h.closeBrowser(browser);
  if (repo) await repo.stop();
});

const statusOf = (page, id) =>
  page.evaluate((id) => document.querySelector(`tr[data-id="${id}"] .status`)?.textContent ?? null, id);

test('the tree updates live, and approving from the page starts the specs', async () => {
  const page = await h.newPage(browser, { width: 1280, height: 860 });
  await page.goto(web.url);
  assert.match(await page.textContent('#tree'), /No loops yet/);
  await page.waitForSelector('#live.on');
  // Marks this document: a reload or navigation would lose it.
  await page.evaluate(() => { window.__sameDocument = 'yes'; });

  repo.loopr(['submit', 'Build the files']);
  // The plan appears and runs (the model takes 2.5 s), then reaches the gate: all live.
  await page.waitForFunction(() => document.querySelector('tr[data-id="001"] .status')?.textContent === 'running',
    null, { timeout: 30000 });
  await page.waitForFunction(
    () => document.querySelector('tr[data-id="001"] .status')?.textContent === 'awaiting_approval',
    null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => window.__sameDocument), 'yes');
  assert.ok(Number(await page.evaluate(() => document.body.dataset.refreshed)) >= 2);
  await page.waitForFunction(() => /forecast \$/.test(document.querySelector('article.plan .meta')?.textContent ?? ''));
  await h.screenshot(page, 'tree-at-gate');

  // The gate: the plan rendered from markdown, and the decision.
  await page.click('header nav a:has-text("Gate")');
  const plan = page.locator('article.gate-plan[data-plan="001"]');
  await plan.waitFor();
  assert.equal(await plan.locator('.artifact h2', { hasText: 'Overview' }).count(), 1);
  assert.equal(await plan.locator('.artifact strong', { hasText: 'files' }).count(), 1);
  await h.screenshot(page, 'gate');
  await plan.locator('button.approve').click();
  await page.waitForURL(/\/gate\?token=/);
  assert.match(await page.textContent('main'), /Nothing waits for you/);

  // The specs start; the tree follows them to the end without a reload.
  await page.click('header nav a:has-text("Tree")');
  await page.evaluate(() => { window.__sameDocument = 'yes'; });
  await page.waitForSelector('tr[data-id="001-001"]', { timeout: 30000 });
  await page.waitForFunction(() => document.querySelector('article.plan .verdict')?.textContent === 'merged',
    null, { timeout: 90000 });
  for (const id of ['001', '001-001', '001-002', '001-001-001', 'code-001-001-001', 'code-001-002-001'])
    assert.equal(await statusOf(page, id), 'complete', id);
  assert.equal(await page.evaluate(() => window.__sameDocument), 'yes');
  await h.screenshot(page, 'tree');
  assert.deepEqual(page.problems, []);
  assert.equal(repo.status('001'), 'complete');
});

test("a code loop's page shows its diff and, opened, an iteration's transcript", async () => {
  const page = await h.newPage(browser, { width: 1280, height: 860 });
  await page.goto(web.url);
  await page.click('a.id:text-is("code-001-001-001")');
  await page.waitForURL(/\/loop\/code-001-001-001\?token=/);
  const diff = page.locator('div.diff details.dfile[data-file="code/code-001-001-001.txt"]');
  await diff.waitFor();
  assert.equal(await diff.locator('tr.l.add td.c', { hasText: '+made by code-001-001-001' }).count(), 1);
  assert.equal(await diff.locator('tr.l.add td.ln').nth(1).textContent(), '1');

  const iteration = page.locator('details.iteration[data-n="1"]');
  assert.equal(await iteration.evaluate((d) => d.open), false); // collapsed by default
  await iteration.locator('summary').click();
  await iteration.locator('.transcript').waitFor();
  assert.equal(await iteration.locator('.tool-call .tool', { hasText: 'write_file' }).count(), 1);
  assert.match(await iteration.locator('.tool-call pre').first().textContent(), /code\/code-001-001-001\.txt/);
  assert.match(await iteration.locator('pre.validation').textContent(), /ok/);
  await iteration.locator('details.prompt summary').click();
  assert.match(await iteration.locator('pre.prompt').textContent(), /\.loopr\/phases\//);
  await h.screenshot(page, 'loop');

  // The plan's page: its artifact rendered and the whole tree's diff.
  await page.click('table.fields a:text-is("001")');
  await page.waitForURL(/\/loop\/001\?token=/);
  assert.equal(await page.locator('.artifact h2', { hasText: 'Specs to Create' }).count(), 1);
  // The whole tree's change, still shown after it merged into main: every code loop's file.
  assert.match(await page.textContent('.diff-section summary'), /git diff [0-9a-f]{12}\.\.\.loopr\/001$/);
  for (const id of ['code-001-001-001', 'code-001-002-001'])
    assert.equal(await page.locator(`div.diff details.dfile[data-file="code/${id}.txt"]`).count(), 1, id);
  assert.deepEqual(page.problems, []);
});
