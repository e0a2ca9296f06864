// Every action the CLI has, from the page (issue 43), each checked in the daemon's state after:
// iterate a plan with feedback (at the gate, and after its tree merged), pause, resume, stop
// (confirmed first), iterate a code loop with feedback, answer, and the merge of a `merge: manual`
// tree (confirmed first). One tree walks through all of them: the plan takes feedback at the
// gate; a slow code loop is paused, resumed and stopped; the feedback makes it ask a question;
// the answer completes it; the complete tree waits for the merge the page makes; the merged
// plan takes feedback again and comes back to the gate.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import * as h from './harness.mjs';

const CODE = 'code-001-001-001';

function actionsScript() {
  const write = (content) =>
    '        - name: write_file\n' +
    `          input: {path: "code/{{loop_id}}.txt", content: "${content}\\n"}\n`;
  return h.treeScript({ specs: ['alpha'], codeRules:
    // After the answer: the port, and the validation passes.
    '  - name: code-answered\n    match: {loop_type: code, first_user: "The user answered:\\\\s+(PORT-\\\\d+)"}\n' +
    '    reply:\n      tool_use:\n' + write('{{first_user.1}}') +
    // The person's feedback: the loop asks which port (its iteration fails, so it waits).
    '  - name: code-asks\n    match: {loop_type: code, first_user: "ASK-THE-PORT"}\n' +
    '    reply:\n      tool_use:\n' + write('WIP') +
    '        - name: ask_user\n          input: {question: "Which port?"}\n' +
    // Before: slow work that never passes (time to pause, resume and stop it).
    '  - name: code-slow\n    match: {loop_type: code}\n    reply:\n      fault: {delay: 2500ms}\n' +
    '      tool_use:\n' + write('WIP') });
}

let browser;
let repo;
let web;

before(async () => {
  browser = await h.launchBrowser();
  repo = await h.makeRepo(actionsScript());
  const config = path.join(repo.dir, '.loopr', 'config.yml');
  fs.writeFileSync(config,
    fs.readFileSync(config, 'utf8').replace('max_iterations: 2', 'max_iterations: 12') + 'merge: manual\n');
  fs.writeFileSync(path.join(repo.dir, 'check.sh'), '! grep -rqs WIP code/\n');
  execFileSync('git', ['commit', '-qam', 'manual merge; WIP fails'], { cwd: repo.dir });
  web = h.startWeb(repo);
});

after(async () => {
  await h.closeBrowser(browser);
  if (repo) await repo.stop();
});

const loopUrl = (id) => `${web.base}/loop/${id}?token=${web.token}`;

/// Clicks the page's button for `action`, and waits for the loop page it returns to.
async function act(page, action) {
  await page.click(`section.loop-actions button.${action}`);
  await page.waitForURL(/\/loop\/[^/?]+\?token=/);
}

let page;

/// The tree's verdict as the daemon answers it (`GET /v1/loops/ID`'s `tree_verdict`), read from
/// the plan page's live fields.
async function verdictOf(id) {
  const res = await fetch(`${web.base}/loop/${id}?token=${web.token}&part=summary`);
  const m = (await res.text()).match(/class="verdict v-([a-z_]+)"/);
  return m ? m[1] : null;
}

/// The prompt of iteration `n` of loop `id` ('' while it has none).
function promptOf(id, n) {
  const file = path.join(repo.dir, '.loopr', 'logs', 'loops', id, 'iterations', String(n).padStart(3, '0'), 'prompt.md');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

/// Waits for plan 001 to be back at the gate after iteration `n`, and returns its prompt.
async function backAtTheGate(n) {
  await h.waitFor(`plan 001 at the gate after iteration ${n}`, () => {
    const plan = repo.json(['show', '001']);
    return plan.status === 'awaiting_approval' && plan.iteration === n;
  }, 120000);
  return promptOf('001', n);
}

test('the plan takes feedback at the gate, from the gate page', async () => {
  repo.loopr(['submit', 'Build the port file']);
  await backAtTheGate(1);
  page = await h.newPage(browser);
  await page.goto(`${web.base}/gate?token=${web.token}`);
  const plan = page.locator('article.gate-plan[data-plan="001"]');
  await plan.locator('textarea[name="feedback"]').fill('GATE-FEEDBACK-7: name the port file');
  await plan.locator('button.iterate').click();
  await page.waitForURL(/\/gate\?token=/);
  // The plan ran again with the feedback in its prompt, and waits at the gate again.
  const prompt = await backAtTheGate(2);
  assert.match(prompt, /GATE-FEEDBACK-7: name the port file/);
  assert.doesNotMatch(promptOf('001', 1), /GATE-FEEDBACK-7/);
  await page.goto(`${web.base}/gate?token=${web.token}`);
  assert.match(await plan.locator('.meta').textContent(), /iteration 2\//);
});

test('pause and resume from the page', async () => {
  repo.loopr(['approve', '001']);
  await repo.waitStatus(CODE, 'running', 120000);
  await page.goto(loopUrl(CODE));
  await act(page, 'pause');
  await repo.waitStatus(CODE, 'paused');
  await page.goto(loopUrl(CODE));
  await h.screenshot(page, 'actions-paused');
  assert.equal(await page.locator('section.loop-actions button.pause').count(), 0);
  await act(page, 'resume');
  await h.waitFor(`${CODE} to run again`, () => ['pending', 'running'].includes(repo.status(CODE)));
});

test('stop asks first, then stops', async () => {
  await page.goto(loopUrl(CODE));
  await page.click('section.loop-actions button.stop');
  await page.waitForURL(/\/loop\/code-001-001-001\/stop$/);
  assert.match(await page.textContent('main'), /Stop loop code-001-001-001\?/);
  assert.notEqual(repo.status(CODE), 'stopped', 'asking stopped nothing');
  await h.screenshot(page, 'actions-confirm-stop');
  await page.click('button.confirm.stop');
  await page.waitForURL(/\/loop\/code-001-001-001\?token=/);
  await repo.waitStatus(CODE, 'stopped');
});

test('iterate with feedback, then answer the question it brings', async () => {
  await page.goto(loopUrl(CODE));
  await page.fill('section.loop-actions textarea[name="feedback"]', 'ASK-THE-PORT first, please');
  await act(page, 'iterate');
  await repo.waitStatus(CODE, 'awaiting_answer', 120000);
  // (Only a prompt carrying the feedback makes the mock model ask.)

  await page.goto(loopUrl(CODE));
  assert.match(await page.textContent('pre.asked'), /Which port\?/);
  assert.match(await page.title(), /^code-001-001-001 asks · code code-001-001-001 · /);
  await page.fill('section.decide textarea[name="text"]', 'PORT-8080');
  await page.click('section.decide button.answer');
  await page.waitForURL(/\/loop\/code-001-001-001\?token=/);
  await repo.waitStatus(CODE, 'complete', 120000);
});

test('the complete manual tree waits for its merge, which the page makes after asking', async () => {
  await h.waitFor('the tree to wait for its merge', async () => (await verdictOf('001')) === 'complete', 120000);
  await page.goto(loopUrl('001'));
  assert.match(await page.title(), /^plan 001 waits for its merge · /);
  await page.click('section.loop-actions button.merge');
  await page.waitForURL(/\/loop\/001\/merge$/);
  assert.match(await page.textContent('main'), /Merge plan 001\?/);
  await h.screenshot(page, 'actions-confirm-merge');
  await page.click('button.confirm.merge');
  await page.waitForURL(/\/loop\/001\?token=/);
  await h.waitFor('the tree to be merged', async () => (await verdictOf('001')) === 'merged');
  const file = execFileSync('git', ['show', `main:code/${CODE}.txt`], { cwd: repo.dir, encoding: 'utf8' });
  assert.equal(file, 'PORT-8080\n');
  assert.deepEqual(page.problems, []);
});

test('the merged plan takes feedback from its page and comes back to the gate', async () => {
  const before = repo.json(['show', '001']).iteration;
  await page.goto(loopUrl('001'));
  await page.fill('section.loop-actions textarea[name="feedback"]', 'AFTER-FEEDBACK-9: add a second port');
  await act(page, 'iterate');
  const prompt = await backAtTheGate(before + 1);
  assert.match(prompt, /AFTER-FEEDBACK-9: add a second port/);
  // Its old tree made way for the new plan's.
  assert.equal(repo.status(CODE), 'invalidated');
  assert.deepEqual(page.problems, []);
});
