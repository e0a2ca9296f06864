// The web page as a place to review (issue 43), in a real browser against a real daemon: a code
// loop's diff reads one line per row (a 40-line change is 40 rows high), comments on two of its
// lines survive a daemon restart and go back to the loop as ONE iteration whose prompt names
// file and line of each, in order; the page then says which iteration took them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import * as h from './harness.mjs';

const CODE = 'code-001-001-001';
const FILE = `code/${CODE}.txt`;

/// 40 lines; lines 5 and 9 say BROKEN unless `fixed` (the validation fails on BROKEN).
const forty = (fixed) =>
  Array.from({ length: 40 }, (_, i) =>
    !fixed && (i === 4 || i === 8) ? `BROKEN ${i + 1}` : `line ${i + 1}`).join('\n');

/// treeScript's plan, spec and phase; the code loop writes the broken file until its prompt
/// carries the comments, then the fixed one.
function reviewScript() {
  const writer = (content) =>
    '      tool_use:\n        - name: write_file\n          input:\n' +
    `            path: "code/{{loop_id}}.txt"\n            content: |\n` +
    content.split('\n').map((l) => '              ' + l).join('\n') + '\n';
  return h.treeScript({ specs: ['alpha'], codeRules:
    '  - name: code-fixed\n    match: {loop_type: code, first_user: "Comments on lines of the diff"}\n' +
    '    reply:\n' + writer(forty(true)) +
    '  - name: code-broken\n    match: {loop_type: code}\n    reply:\n' + writer(forty(false)) });
}

let browser;
let repo;
let web;

before(async () => {
  browser = await h.launchBrowser();
  repo = await h.makeRepo(reviewScript());
  fs.writeFileSync(path.join(repo.dir, 'check.sh'), '! grep -rqs BROKEN code/\n');
  execFileSync('git', ['commit', '-qam', 'check for BROKEN'], { cwd: repo.dir });
  web = h.startWeb(repo);
});

after(async () => {
  await h.closeBrowser(browser);
  if (repo) await repo.stop();
});

const loopUrl = (id) => `${web.base}/loop/${id}?token=${web.token}`;

test('a code loop fails; its 40-line diff is 40 rows high; comments on two lines become one iteration', async () => {
  repo.loopr(['submit', 'Write forty lines']);
  await repo.waitStatus('001', 'awaiting_approval');
  const page = await h.newPage(browser);
  await page.goto(`${web.base}/gate?token=${web.token}`);
  assert.match(await page.title(), /^plan 001 at the gate · Gate · loopr-browser-repo-\w+ · loopr$/);
  await h.screenshot(page, 'review-gate');
  await page.click('article.gate-plan[data-plan="001"] button.approve');
  await page.waitForURL(/\/gate\?token=/);
  await repo.waitStatus(CODE, 'failed', 120000);

  // The diff: one folding section for the file, one row per line, both sides numbered.
  await page.goto(loopUrl(CODE));
  const file = page.locator(`details.dfile[data-file="${FILE}"]`);
  await file.waitFor();
  assert.equal(await file.evaluate((d) => d.open), true);
  const rows = file.locator('tr.l');
  assert.equal(await rows.count(), 40);
  const layout = await file.evaluate((d) => {
    const lineHeight = parseFloat(getComputedStyle(d.querySelector('td.c')).lineHeight);
    const heights = [...d.querySelectorAll('tr.l')].map((r) => r.getBoundingClientRect().height);
    const body = d.querySelector('tbody').getBoundingClientRect().height;
    const hunks = d.querySelectorAll('tr.hunk').length;
    return { lineHeight, heights, body, hunks };
  });
  assert.ok(layout.lineHeight > 0, JSON.stringify(layout));
  for (const [i, height] of layout.heights.entries())
    assert.ok(Math.abs(height - layout.lineHeight) < 1, `row ${i + 1} is ${height}px, a line is ${layout.lineHeight}px`);
  // The whole table: 40 line rows and the hunk header, nothing in between.
  assert.ok(Math.abs(layout.body - (40 + layout.hunks) * layout.lineHeight) < 2,
    `the diff is ${layout.body}px high, ${40 + layout.hunks} rows of ${layout.lineHeight}px would be ${(40 + layout.hunks) * layout.lineHeight}px`);
  assert.equal(await rows.nth(4).locator('td.ln').nth(1).textContent(), '5');
  assert.equal(await rows.nth(4).locator('td.c').textContent(), '+BROKEN 5');
  await h.screenshot(page, 'review-loop-diff');

  // The header folds the file away and back.
  await file.locator('summary .fname').click();
  assert.equal(await file.evaluate((d) => d.open), false);
  await file.locator('summary .fname').click();
  assert.equal(await file.evaluate((d) => d.open), true);

  // Comments on lines 5 and 9, each from a click on its line.
  for (const [line, text] of [[5, 'line five must not say BROKEN'], [9, 'nor line nine <b>please</b>']]) {
    await file.locator(`tr.l[data-line="${line}"] td.c`).click();
    const form = file.locator('tr.comment-form');
    await form.locator('textarea').fill(text);
    await form.locator('button.add-comment').click();
    await page.waitForURL(/#comments$/);
    await page.locator(`section.comments li:nth-child(${line === 5 ? 1 : 2}) .comment.pending`).waitFor();
  }
  const pending = page.locator('section.comments .comment.pending');
  assert.equal(await pending.count(), 2);
  assert.match(await pending.nth(1).locator('.text').textContent(), /nor line nine <b>please<\/b>/);
  // Under their lines in the diff too.
  assert.equal(await page.locator(`tr.l[data-line="5"] + tr.cmt .comment`).count(), 1);
  await h.screenshot(page, 'review-comments-pending');
  const ran = repo.json(['show', CODE]).iterations.map((i) => i.n);

  // They are stored with the loop: a daemon restart keeps them.
  repo.loopr(['daemon', 'stop']);
  web = h.startWeb(repo);
  await page.goto(loopUrl(CODE));
  // The old page's live connection broke with the daemon it talked to: the browser said so in
  // its console (a cut stream, a refused reconnect). That was the restart, not the page.
  page.problems.splice(0, page.problems.length,
    ...page.problems.filter((p) => !/ERR_INCOMPLETE_CHUNKED_ENCODING|ERR_CONNECTION_REFUSED/.test(p)));
  assert.equal(await page.locator('section.comments .comment.pending').count(), 2);
  assert.deepEqual(repo.json(['show', CODE]).iterations.map((i) => i.n), ran, 'nothing was sent yet');

  // Sent together: ONE iteration took both, and its prompt names file and line of each, in order.
  await page.click('button.send-comments');
  await page.waitForURL(/#comments$/);
  await repo.waitStatus(CODE, 'complete', 120000);
  await page.goto(loopUrl(CODE));
  const sent = page.locator('section.comments .comment.sent');
  assert.equal(await sent.count(), 2);
  const took = await sent.evaluateAll((cs) => cs.map((c) => c.querySelector('.outcome').textContent.match(/iteration #(\d+) took it/)?.[1]));
  assert.equal(took[0], took[1], 'one iteration took both: ' + took);
  const n = Number(took[0]);
  assert.ok(n > Math.max(...ran), `iteration ${n} came after ${ran}`);
  const promptOf = (k) => {
    const file = path.join(repo.dir, '.loopr', 'logs', 'loops', CODE, 'iterations', String(k).padStart(3, '0'), 'prompt.md');
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  };
  const prompt = promptOf(n);
  const first = prompt.indexOf(`1. ${FILE} line 5:\n   line five must not say BROKEN`);
  const second = prompt.indexOf(`2. ${FILE} line 9:\n   nor line nine <b>please</b>`);
  assert.ok(first > 0 && second > first, `the prompt of iteration ${n}:\n` + prompt);
  for (const k of ran) assert.ok(!promptOf(k).includes('Comments on lines of the diff'), `iteration ${k} saw no comment`);
  assert.ok(repo.json(['show', CODE]).iterations.some((i) => i.n === n));

  // The page links the iteration that took them, and its prompt shows them.
  const iteration = page.locator(`details.iteration[data-n="${n}"]`);
  await iteration.locator('summary').click();
  await iteration.locator('details.prompt summary').click();
  assert.match(await iteration.locator('pre.prompt').textContent(), /1\. code\/code-001-001-001\.txt line 5:/);
  await h.screenshot(page, 'review-comments-sent');
  assert.deepEqual(page.problems, []);
});

test("the whole file opens from the diff's header, every line numbered", async () => {
  const page = await h.newPage(browser);
  await page.goto(loopUrl(CODE));
  await page.click(`details.dfile[data-file="${FILE}"] a.whole`);
  await page.waitForURL(/\/file\?token=/);
  const rows = page.locator('table.whole tr.l');
  assert.equal(await rows.count(), 40);
  assert.equal(await rows.nth(39).locator('td.ln').textContent(), '40');
  assert.equal(await rows.nth(4).locator('td.c').textContent(), 'line 5');
  assert.deepEqual(page.problems, []);
});

test('the tree, once merged, has no gate warning and its title says nothing waits', async () => {
  await repo.waitStatus('001', 'complete', 120000);
  const page = await h.newPage(browser);
  await page.goto(web.url);
  await page.waitForFunction(() => document.querySelector('article.plan .verdict')?.textContent === 'merged',
    null, { timeout: 60000 });
  assert.match(await page.title(), /^Tree · loopr-browser-repo-\w+ · loopr$/);
  assert.equal(await page.locator('.warn').count(), 0);
  await h.screenshot(page, 'review-tree');
});
