// The web UI shows model-written text to a person's browser: a hostile plan must run nothing,
// load nothing and navigate nowhere, and only the person's own pages may act. Each check is done
// the way an attacker would try it, in a real browser.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';

import * as h from './harness.mjs';

const HOSTILE_PLAN = `# Plan <script>alert('title')</script>

## Overview
Hello <img src=x onerror="alert('img')"> and <script>alert('inline')</script> there.

[click me](javascript:alert('link')) and <a href="javascript:alert('raw')">raw link</a>
![pixel](https://tracker.example/p.png) <iframe src="https://evil.example"></iframe>

<div onmouseover="alert('div')">hover</div>

## Phases
1. Write the files.

## Success Criteria
- check.sh passes.

## Specs to Create
- spec-alpha: Write <b onclick="alert('spec')">the</b> files.
`;
const HOSTILE_TASK = `<img src=x onerror=alert('task')><script>alert('task2')</script>`;

let browser;
let repo;
let web;
let evil;
let evilPort;

before(async () => {
  browser = await h.launchBrowser(['--host-resolver-rules=MAP rebind.test 127.0.0.1']);
  repo = await h.makeRepo(h.treeScript({ planBody: HOSTILE_PLAN }));
  repo.loopr(['submit', HOSTILE_TASK]);
  await repo.waitStatus('001', 'awaiting_approval');
  web = h.startWeb(repo);
  // Another site on this machine: its pages try to act on the UI.
  evil = http.createServer((req, res) => {
    const form = `<form id="f" method="post" action="${web.base}/loop/001/approve">
      <input type="hidden" name="token" value="${web.token}"><button>win a prize</button></form>
      <script>document.getElementById('f').submit();</script>`;
    const read = `<script>
      fetch(${JSON.stringify(web.url)}).then(r => r.text()).then(t => { document.title = 'READ ' + t.length; },
        e => { document.title = 'BLOCKED ' + e.name; });</script>`;
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(req.url === '/read' ? read : form);
  });
  await new Promise((resolve) => evil.listen(0, '127.0.0.1', resolve));
  evilPort = evil.address().port;
});

after(async () => {
  if (evil) evil.close();
  await h.closeBrowser(browser);
  if (repo) await repo.stop();
});

test('a hostile plan executes nothing, loads nothing and is shown escaped', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const dialogs = [];
  const console = [];
  const requests = [];
  let navigations = 0;
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  page.on('console', (m) => console.push(m.type() + ': ' + m.text()));
  page.on('pageerror', (e) => console.push('page error: ' + e.message));
  page.on('request', (r) => requests.push(r.url()));
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations += 1; });

  for (const path of ['/gate', '/loop/001', '/']) {
    await page.goto(`${web.base}${path}?token=${web.token}`);
    const before = navigations;
    // Nothing the model wrote became an element or an attribute that runs.
    const active = await page.evaluate(() => ({
      scripts: [...document.scripts].map((s) => s.src.replace(/\?.*/, '')),
      images: document.images.length,
      frames: document.querySelectorAll('iframe, object, embed').length,
      handlers: [...document.querySelectorAll('*')].filter((e) =>
        [...e.attributes].some((a) => a.name.startsWith('on'))).length,
      jsLinks: [...document.querySelectorAll('a')].filter((a) => !/^https?:|^mailto:/.test(a.href)).length,
    }));
    assert.deepEqual(active.scripts, [`${web.base}/static/app.js`], path);
    assert.equal(active.images, 0, path);
    assert.equal(active.frames, 0, path);
    assert.equal(active.handlers, 0, path);
    assert.equal(active.jsLinks, 0, path);
    // ...and what it wrote is there to read, as text.
    const text = await page.textContent('main');
    assert.ok(text.includes(HOSTILE_TASK), path + ': the task as written');
    if (path !== '/') {
      assert.ok(text.includes(`<script>alert('inline')</script>`), path);
      assert.ok(text.includes(`<img src=x onerror="alert('img')">`), path);
      assert.ok(text.includes(`click me (javascript:alert('link'))`), path);
      // Clicking where the link was goes nowhere.
      await page.getByText('click me', { exact: false }).first().click();
      await page.mouse.move(10, 10);
      await page.getByText('hover').first().hover();
      assert.equal(navigations, before, path + ': no navigation');
    }
    if (path === '/gate') await h.screenshot(page, 'hostile-plan');
  }
  assert.deepEqual(dialogs, []);
  assert.deepEqual(console.filter((m) => /Content Security Policy|Refused|error/i.test(m)), []);
  assert.deepEqual(requests.filter((u) => !u.startsWith(web.base)), [], 'nothing loaded from elsewhere');
  assert.equal(repo.status('001'), 'awaiting_approval');
});

test('a request without the token, for a rebound host name, or from another site is refused', async () => {
  const page = await browser.newPage();
  // No token.
  let res = await page.goto(`${web.base}/`);
  assert.equal(res.status(), 403);
  assert.match(await page.textContent('body'), /token is missing or wrong/);
  res = await page.goto(`${web.base}/gate?token=${'0'.repeat(64)}`);
  assert.equal(res.status(), 403);

  // DNS rebinding: a name the attacker controls, now resolving to 127.0.0.1, even with the token.
  res = await page.goto(`http://rebind.test:${web.port}/?token=${web.token}`);
  assert.equal(res.status(), 403);
  assert.match(await page.textContent('body'), /Host header/);

  // Cross-site request forgery: another site's page posts the approval (with the real token).
  await page.goto(`http://127.0.0.1:${evilPort}/`);
  await page.waitForURL(`${web.base}/loop/001/approve`);
  assert.match(await page.textContent('body'), /this UI's own pages/);
  assert.equal(repo.status('001'), 'awaiting_approval', 'the forged approval changed nothing');

  // Another site cannot read a page either, even knowing the address.
  await page.goto(`http://127.0.0.1:${evilPort}/read`);
  await page.waitForFunction(() => /^(READ|BLOCKED)/.test(document.title));
  assert.match(await page.title(), /^BLOCKED/);

  // The person's own page still works: approve from the gate.
  await page.goto(`${web.base}/gate?token=${web.token}`);
  await page.click('article.gate-plan[data-plan="001"] button.approve');
  await page.waitForURL(/\/gate\?token=/);
  await repo.waitStatus('001', 'complete');
});
