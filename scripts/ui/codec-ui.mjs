// Drives Debian's chromium through the Temporal Web UI with cartwright's
// codec server (see audit/webui_test.go, which sets the environment up).
import puppeteer from 'puppeteer-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const UI = env('UI_URL'), CODEC = env('CODEC_URL'), TOKEN = env('STAFF_TOKEN');
const WID = env('WORKFLOW_ID'), RUN = env('RUN_ID'), APPROVAL = env('APPROVAL_ID');
const NAME = env('PLANTED_NAME'), SHOTS = env('SHOTS_DIR');
const step = (msg) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);
const fail = (msg) => { throw new Error(msg); };

const profile = mkdtempSync(join(tmpdir(), 'cartwright-ui-'));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${profile}`],
});
const page = await browser.newPage();
await page.setViewport({ width: 1400, height: 1000 });
const codecAnswers = [];
page.on('response', (r) => { if (r.url().startsWith(CODEC)) codecAnswers.push(r.status()); });
const historyURL = `${UI}/namespaces/default/workflows/${encodeURIComponent(WID)}/${RUN}/history`;
const text = () => page.evaluate(() => document.body.innerText);
const waitText = async (s, ms = 20000) => {
  await page.waitForFunction((s) => document.body.innerText.includes(s), { timeout: ms }, s)
    .catch(() => fail(`page never showed ${JSON.stringify(s)}`));
};
const shot = (name) => page.screenshot({ path: join(SHOTS, name), fullPage: false });

try {
  // The UI sends cookies to the codec server only with "include
  // cross-origin credentials" on: set the UI's codec settings as a staff
  // member would in its Codec Server dialog.
  await page.goto(`${UI}/namespaces/default/workflows`, { waitUntil: 'networkidle2' });
  await page.evaluate((endpoint) => {
    localStorage.setItem('endpoint', JSON.stringify(endpoint));
    localStorage.setItem('includeCredentials', 'true');
    localStorage.setItem('passAccessToken', 'false');
    localStorage.setItem('overrideRemoteCodecConfiguration', 'true');
  }, CODEC);

  step('1. no staff credential: the codec server must refuse and the input stay encrypted');
  await page.goto(historyURL, { waitUntil: 'networkidle2' });
  await waitText(WID);
  await new Promise((r) => setTimeout(r, 1500));
  let body = await text();
  console.log(body.slice(0, 3000));
  await shot('1-encoded-without-credential.png');
  if (body.includes(NAME)) fail('the planted name is visible without a staff credential');
  if (!codecAnswers.some((s) => s === 401)) fail(`codec server answers without credential: ${codecAnswers}`);
  step(`   codec server answered ${[...new Set(codecAnswers)].join(',')}; planted name not shown`);
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
