// A tree held back for review (its code loop changed `.vscode/`, which `protect.hold` never merges
// on its own), merged from the page after the page asks (issue 43: "merge of a held or `manual`
// tree"): the confirmation merges nothing, the confirmed merge puts the held file on main, and
// the daemon's state says so.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';

import * as h from './harness.mjs';

const CODE = 'code-001-001-001';

function heldScript() {
  return h.treeScript({ specs: ['alpha'], codeRules:
    '  - name: code\n    match: {loop_type: code}\n    reply:\n      tool_use:\n' +
    '        - name: write_file\n          input: {path: "code/{{loop_id}}.txt", content: "made\\n"}\n' +
    '        - name: write_file\n          input: {path: ".vscode/settings.json", content: "{\\"held\\": true}\\n"}\n' });
}

let browser;
let repo;
let web;

before(async () => {
  browser = await h.launchBrowser();
  repo = await h.makeRepo(heldScript());
  web = h.startWeb(repo);
});

after(async () => {
  await h.closeBrowser(browser);
  if (repo) await repo.stop();
});

const onMain = (file) => {
  try {
    return execFileSync('git', ['show', `main:${file}`], { cwd: repo.dir, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    return null;
  }
};

test('a held tree waits for its merge, which the page makes after asking', async () => {
  repo.loopr(['submit', 'Write the file and the editor settings']);
  await repo.waitStatus('001', 'awaiting_approval');
  repo.loopr(['approve', '001']);
  await repo.waitStatus(CODE, 'complete', 120000);
  await h.waitFor('the plan to be held for review', () => {
    const plan = repo.json(['show', '001']);
    return plan.status === 'blocked' && plan.end_reason === 'held_for_review';
  }, 120000);
  assert.equal(onMain('.vscode/settings.json'), null, 'held: not merged on its own');

  const page = await h.newPage(browser);
  await page.goto(`${web.base}/loop/001?token=${web.token}`);
  assert.match(await page.title(), /^plan 001 waits for its merge · plan 001 · /);
  assert.equal(await page.textContent('.verdict'), 'merge_failed'); // the tree's verdict: not merged
  await page.click('section.loop-actions button.merge');
  await page.waitForURL(/\/loop\/001\/merge$/);
  assert.match(await page.textContent('main'), /Merge plan 001\?/);
  await h.screenshot(page, 'held-confirm-merge');
  assert.equal(onMain('.vscode/settings.json'), null, 'asking merged nothing');
  assert.equal(repo.json(['show', '001']).status, 'blocked');

  await page.click('button.confirm.merge');
  await page.waitForURL(/\/loop\/001\?token=/);
  await h.waitFor('the held tree to be merged', () => onMain('.vscode/settings.json') !== null, 60000);
  assert.equal(onMain('.vscode/settings.json'), '{"held": true}\n');
  assert.equal(onMain(`code/${CODE}.txt`), 'made\n');
  await h.waitFor('the plan to say it merged', async () => {
    await page.goto(`${web.base}/loop/001?token=${web.token}`);
    return (await page.textContent('.verdict')) === 'merged';
  });
  assert.equal(await page.locator('section.loop-actions button.merge').count(), 0);
  assert.match(await page.title(), /^plan 001 · /);
  await h.screenshot(page, 'held-merged');
  assert.deepEqual(page.problems, []);
});
