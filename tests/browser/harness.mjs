// What every browser test file shares: a real repository with a real daemon (started by
// `loopr web`, the way a person starts it) against the real loopr-mock-llm, and ONE headless
// Debian chromium per file, driven by playwright-core. Paths come from ctest's environment:
// LOOPR_BIN, LOOPR_MOCK_LLM_BIN, LOOPR_BROWSER_OUT (screenshots), LOOPR_CHROMIUM (default
// /usr/bin/chromium). A chromium that cannot start ends the file with exit code 77 (ctest:
// skipped) and says why; anything else that is missing is a failure.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const SKIP = 77;

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run the browser tests through ctest)`);
  return v;
}

export const outDir = process.env.LOOPR_BROWSER_OUT || path.join(os.tmpdir(), 'loopr-browser-output');
fs.mkdirSync(outDir, { recursive: true });

/// Polls `fn` until it returns a truthy value; throws after `ms` with `what`.
export async function waitFor(what, fn, ms = 60000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what} (last: ${last})`);
}

const CHROMIUM_FLAGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage',
];

/// Whether chromium itself starts here: it prints a blank page's DOM, with a fresh profile.
/// Returns null when it does, else why not.
function chromiumProblem(executablePath) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'loopr-chromium-probe-'));
  try {
    const out = execFileSync(executablePath,
      [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, '--dump-dom', 'about:blank'],
      { encoding: 'utf8', timeout: 60000, stdio: ['ignore', 'pipe', 'pipe'] });
    return /<html/i.test(out) ? null : `it printed no page (${out.slice(0, 200)})`;
  } catch (e) {
    const err = (e.stderr || '').toString().trim().split('\n').slice(-3).join(' | ');
    return `${e.message.split('\n')[0]}${err ? ': ' + err : ''}`;
  } finally {
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

/// Starts chromium (playwright gives it a fresh profile of its own), or exits the process with
/// 77 (skipped) when chromium cannot start on this machine at all. Chromium starting on its own
/// but not under playwright-core is a failure, not a skip.
export async function launchBrowser(extraArgs = []) {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (e) {
    throw new Error(
      'playwright-core is not installed in tests/browser (tools/install-deps.sh runs `npm ci` there): ' +
        e.message
    );
  }
  const executablePath = process.env.LOOPR_CHROMIUM || '/usr/bin/chromium';
  if (!fs.existsSync(executablePath)) {
    throw new Error(`${executablePath} does not exist (tools/install-deps.sh installs Debian's chromium)`);
  }
  const problem = chromiumProblem(executablePath);
  if (problem) {
    console.log(`SKIPPED: chromium (${executablePath}) cannot start here: ${problem}`);
    process.exit(SKIP);
  }
  // playwright passes its own headless flag.
  const args = [...CHROMIUM_FLAGS.filter((f) => !f.startsWith('--headless')), ...extraArgs];
  return chromium.launch({ executablePath, args, headless: true, timeout: 60000 });
}

export async function closeBrowser(browser) {
  if (browser) await browser.close();
}

/// A mock-llm script whose plan names `specs` (with an optional `planBody` instead) and whose
/// spec, phase and code loops each take `delayMs` per model turn. `codeRules`: mock-llm rules
/// (YAML list items) that replace the code loop's own (each writes `code/{{loop_id}}.txt`).
export function treeScript({ specs = ['alpha'], planBody = null, planDelayMs = 0, delayMs = 0, codeRules = null } = {}) {
  const indent = (text, n) => text.split('\n').map((l) => (l ? ' '.repeat(n) + l : l)).join('\n');
  const plan = planBody ||
    '# Plan for the browser test\n\n## Overview\nMake **files** with `code` in them.\n\n## Phases\n' +
    '1. Write the files.\n\n## Success Criteria\n- check.sh passes.\n\n## Specs to Create\n' +
    specs.map((s) => `- spec-${s}: Write the ${s} files.\n`).join('');
  const delay = (ms) => (ms ? `      fault: {delay: ${ms}ms}\n` : '');
  const writer = (body) =>
    '      tool_use:\n        name: write_file\n        input:\n          path: "{{first_user.1}}"\n' +
    '          content: |\n' + indent(body, 12) + '\n';
  const spec = '# Spec {{loop_id}}\n\n## Parent Plan\nThe plan.\n\n## Overview\nFiles.\n\n## Phases\n' +
    '1. **Part one**\n   Write part one.\n   - Files: code/x.txt\n';
  const phase = '# Phase {{loop_id}}\n\n## Parent Spec\nThe spec.\n\n## Task\nWrite the file.\n\n' +
    '## Specific Work\n- Write it.\n\n## Success Criteria\n- check.sh passes.\n';
  return String.raw`defaults:
  usage: {input_tokens: 1000, output_tokens: 200}
  thinking: false
rules:
  - name: finish
    match: {turn: 2}
    reply: {text: "Done."}
  - name: plan
    match: {loop_type: plan, first_user: "` + '`' + String.raw`(\\.loopr/plans/[^` + '`' + String.raw`]+)` + '`' + `"}
    reply:
` + delay(planDelayMs) + writer(plan) + String.raw`  - name: spec
    match: {loop_type: spec, first_user: "` + '`' + String.raw`(\\.loopr/specs/[^` + '`' + String.raw`]+)` + '`' + `"}
    reply:
` + delay(delayMs) + writer(spec) + String.raw`  - name: phase
    match: {loop_type: phase, first_user: "` + '`' + String.raw`(\\.loopr/phases/[^` + '`' + String.raw`]+)` + '`' + `"}
    reply:
` + delay(delayMs) + writer(phase) + (codeRules ?? `  - name: code
    match: {loop_type: code}
    reply:
` + delay(delayMs) + `      tool_use:
        - name: write_file
          input: {path: "code/{{loop_id}}.txt", content: "made by {{loop_id}}\\n"}
`);
}

/// A temp git repository with `.loopr/config.yml` pointing at a fresh loopr-mock-llm playing
/// `script`; `loopr(args)` runs the real binary in it. `stop()` ends the daemon and the mock.
export async function makeRepo(script) {
  const loopr = need('LOOPR_BIN');
  const mockBin = need('LOOPR_MOCK_LLM_BIN');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopr-browser-repo-'));
  const mockDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopr-browser-mock-'));
  fs.writeFileSync(path.join(mockDir, 'script.yml'), script);
  const portFile = path.join(mockDir, 'port');
  const mockOut = fs.openSync(path.join(mockDir, 'mock.out'), 'w');
  const mock = spawn(mockBin, ['--script', path.join(mockDir, 'script.yml'), '--port', '0',
    '--port-file', portFile, '--log', path.join(mockDir, 'requests.jsonl')],
  { stdio: ['ignore', mockOut, mockOut] });
  const port = await waitFor('loopr-mock-llm to listen', () => {
    if (mock.exitCode !== null) throw new Error('loopr-mock-llm exited: ' + fs.readFileSync(path.join(mockDir, 'mock.out'), 'utf8'));
    const text = fs.existsSync(portFile) ? fs.readFileSync(portFile, 'utf8').trim() : '';
    return /^\d+$/.test(text) ? Number(text) : 0;
  }, 20000);

  fs.writeFileSync(path.join(dir, 'check.sh'), 'echo ok\n');
  fs.writeFileSync(path.join(dir, '.gitignore'),
    '.loopr/state/\n.loopr/run/\n.loopr/worktrees/\n.loopr/archive/\n.loopr/logs/\n');
  fs.mkdirSync(path.join(dir, '.loopr'));
  fs.writeFileSync(path.join(dir, '.loopr', 'config.yml'),
    `base_branch: main\nllm:\n  provider: anthropic\n  model: claude-sonnet-5-5\n  base_url: http://127.0.0.1:${port}\n` +
    '  max_retries: 2\nconcurrency:\n  max_loops: 20\n  llm_slots: 8\n  requests_per_minute: 100000\n' +
    'loops:\n  code: {max_iterations: 2, validation: "sh check.sh", iteration_timeout: 1m}\n');
  execFileSync('sh', ['-c', 'git init -q -b main . && git config user.name test && ' +
    'git config user.email t@t && git add -A && git commit -q -m init'], { cwd: dir });

  const env = { ...process.env, ANTHROPIC_API_KEY: 'test' };
  for (const k of ['LOOPR_PROVIDER', 'LOOPR_MODEL', 'LOOPR_LOG', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL', 'OPENAI_API_KEY'])
    delete env[k];
  const run = (args) => execFileSync(loopr, ['-C', dir, ...args], { env, encoding: 'utf8', timeout: 120000 });
  const repo = {
    dir,
    loopr: run,
    json: (args) => JSON.parse(run(['--json', ...args])),
    status: (id) => {
      const row = repo.json(['list', '--all']).loops.find((l) => l.id === id);
      return row ? row.status : '(none)';
    },
    waitStatus: (id, status, ms = 60000) => waitFor(`${id} to be ${status}`, () => repo.status(id) === status, ms),
    async stop() {
      try { run(['daemon', 'stop']); } catch (e) { /* not running */ }
      mock.kill('SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(mockDir, { recursive: true, force: true });
    },
  };
  return repo;
}

/// `loopr web` in `repo`: the address it prints, split up.
export function startWeb(repo) {
  const url = repo.loopr(['-q', 'web']).trim();
  const m = url.match(/^http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]{64})$/);
  if (!m) throw new Error('loopr web printed ' + url);
  return { url, port: Number(m[1]), token: m[2], base: `http://127.0.0.1:${m[1]}` };
}

/// A page of `browser` that records what must not happen in `page.problems`: script errors,
/// console errors, dialogs (dismissed).
export async function newPage(browser, viewport = { width: 1280, height: 900 }) {
  const page = await browser.newPage({ viewport });
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push('page error: ' + e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') page.problems.push('console: ' + m.text());
  });
  page.on('dialog', (d) => {
    page.problems.push('dialog: ' + d.message());
    d.dismiss();
  });
  return page;
}

export async function screenshot(page, name) {
  await page.screenshot({ path: path.join(outDir, name + '.png'), fullPage: true });
}
