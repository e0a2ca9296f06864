// Makes docs/web-ui.png, the README's picture of the web UI: the real daemon's tree page in
// Debian's headless chromium, over a fixture tree run by loopr-mock-llm (one plan merged, one
// waiting at the gate). Not a test; run it from the repository root after a build:
//   LOOPR_BIN=build/loopr LOOPR_MOCK_LLM_BIN=build/tools/mock-llm/loopr-mock-llm \
//     node tests/browser/readme-screenshot.mjs docs/web-ui.png
import * as h from './harness.mjs';

const out = process.argv[2] || 'docs/web-ui.png';
const browser = await h.launchBrowser();
const repo = await h.makeRepo(h.treeScript({ specs: ['parser', 'cli'] }));
try {
  repo.loopr(['submit', 'Add a config file parser and its CLI flag']);
  await repo.waitStatus('001', 'awaiting_approval');
  repo.loopr(['approve', '001']);
  await repo.waitStatus('001', 'complete', 120000);
  repo.loopr(['submit', 'Document the config file in the README']);
  await repo.waitStatus('002', 'awaiting_approval');
  const web = h.startWeb(repo);
  const page = await browser.newPage({ viewport: { width: 1100, height: 600 } });
  await page.goto(web.url);
  await page.waitForSelector('#live.on');
  await page.waitForFunction(() => /forecast \$/.test(document.querySelector('article.plan .meta')?.textContent ?? ''));
  await page.screenshot({ path: out, fullPage: true });
  console.log('wrote ' + out);
} finally {
  await h.closeBrowser(browser);
  await repo.stop();
}
