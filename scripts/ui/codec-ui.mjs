// Drives Debian's chromium through the Temporal Web UI with cartwright's
// codec server (see audit/webui_test.go, which sets the environment up):
// the codec steps as docs/support.md gives them, clicked, then the
// support-staff path (support-ui.mjs).
// On failure it saves a screenshot (FAILURE_SHOT) and exits non-zero with
// the condition that did not hold.
import puppeteer from 'puppeteer-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env, step, fail, helpers, scaled } from './lib.mjs';
import { supportPath } from './support-ui.mjs';

const UI = env('UI_URL'), CODEC = env('CODEC_URL'), TOKEN = env('STAFF_TOKEN');
const WID = env('WORKFLOW_ID'), RUN = env('RUN_ID'), APPROVAL = env('APPROVAL_ID');
const NAME = env('PLANTED_NAME'), SHOTS = env('SHOTS_DIR'), REJECTED_WID = env('REJECTED_WORKFLOW_ID');
const FAILURE_SHOT = process.env.FAILURE_SHOT || join(tmpdir(), 'cartwright-ui-failure.png');

const profile = mkdtempSync(join(tmpdir(), 'cartwright-ui-'));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${profile}`],
});
const page = await browser.newPage();
// Navigations and waits without a deadline of their own (puppeteer's 30 s).
page.setDefaultTimeout(scaled(30000));
// Tall enough for the approval's whole current details.
await page.setViewport({ width: 1400, height: 1150 });
const h = helpers(page, SHOTS);
const codecAnswers = [];
page.on('response', (r) => { if (r.url().startsWith(CODEC)) codecAnswers.push(r.status()); });
// press clicks the visible element matching sel whose text is t with the
// mouse, where a person would (h.click): an element covered by another (the
// UI's top bar) is not clicked, so a step a person could not do fails here
// too, naming the cover.
const press = (t, sel) => h.clickText(t, sel);
const historyURL = `${UI}/namespaces/default/workflows/${encodeURIComponent(WID)}/${RUN}/history`;

try {
  // docs/support.md#decoded-payloads-in-the-web-ui, step 1, with the UI's
  // own controls: the dev server's UI has the codec endpoint as its
  // cluster-level setting but without credentials, and the browser-level
  // "include cross-origin credentials" counts only with the browser-level
  // setting chosen and an endpoint entered there.
  step('0. the UI\'s Codec Server settings: browser setting, endpoint, include cross-origin credentials, Apply');
  await page.goto(`${UI}/namespaces/default/workflows`, { waitUntil: 'networkidle2' });
  await h.click('button[aria-label="Codec Server is configured"]', 'the codec icon ("Codec Server is configured") in the top bar');
  await press('Use Cluster-level setting, where available.', 'aside h3');
  await press('Use my browser setting and ignore Cluster-level setting.', 'label');
  // Close the choice again: open, it pushes the toggles under the top bar.
  await press('Use my browser setting and ignore Cluster-level setting.', 'aside h3');
  await page.waitForSelector('#use-local-endpoint-radio', { hidden: true, timeout: 15000 });
  await h.click('#data-encoder-endpoint-input', 'the codec endpoint field');
  await page.keyboard.type(CODEC);
  await press('Include cross-origin credentials', 'label');
  const settings = await page.evaluate(() => ({
    browser: [...document.querySelectorAll('aside h3')].some((e) => e.innerText.trim() === 'Use my browser setting and ignore Cluster-level setting.'),
    credentials: document.querySelector('#pass-access-credentials')?.checked,
    endpoint: document.querySelector('#data-encoder-endpoint-input')?.value,
  }));
  if (!settings.browser || !settings.credentials || settings.endpoint !== CODEC) fail(`codec settings not as the docs say: ${JSON.stringify(settings)}`);
  await h.shot('0-codec-settings.png');
  await press('Apply', 'button');
  await page.waitForSelector('#data-encoder-endpoint-input', { hidden: true, timeout: 15000 })
    .catch(() => fail('the Codec Server settings did not close on Apply'));
  step(`   browser-level endpoint ${settings.endpoint}, cross-origin credentials included`);

  step('1. no staff credential: the codec server must refuse and the input stay encrypted');
  await page.goto(historyURL, { waitUntil: 'networkidle2' });
  await h.waitText(WID);
  await h.until(() => codecAnswers.includes(401), 15000, `the codec server never refused a request without credential: ${codecAnswers}`);
  await h.shot('1-encoded-without-credential.png');
  if ((await h.text()).includes(NAME)) fail('the planted name is visible without a staff credential');
  step(`   codec server answered ${[...new Set(codecAnswers)].join(',')}; planted name not shown`);

  step('2. sign in at the codec server with a staff token');
  await page.goto(`${CODEC}/login`, { waitUntil: 'networkidle2' });
  await page.type('#token', TOKEN);
  await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle2' }), h.click('#signin', 'Sign in')]);
  await h.waitText('Signed in as');
  await h.shot('2-codec-sign-in.png');
  step(`   ${(await h.text()).split('\n').find((l) => l.includes('Signed in'))}`);
  // Opened again later, the page still says who is signed in and offers
  // Sign out (docs/support.md, step 2), not a blank sign-in form.
  await page.goto(`${CODEC}/login`, { waitUntil: 'networkidle2' });
  await h.waitText('Signed in as');
  if (!(await page.$('#signout'))) fail('the codec sign-in page, opened again, offers no Sign out');
  step('   opened again: still says who is signed in, with Sign out');

  step('3. the same history, decoded for staff');
  codecAnswers.length = 0;
  await page.goto(historyURL, { waitUntil: 'networkidle2' });
  await h.waitText(NAME);
  await page.evaluate((name) => {
    const leaf = [...document.querySelectorAll('span, div, pre')].find((e) => e.children.length === 0 && e.textContent.includes(name));
    if (leaf) leaf.scrollIntoView({ block: 'center' });
  }, NAME);
  await h.shot('3-decoded-input.png');
  if (!codecAnswers.includes(200)) fail(`codec server answers: ${codecAnswers}`);
  step(`   input shows ${JSON.stringify(NAME)} (codec server answered ${[...new Set(codecAnswers)].join(',')})`);

  await supportPath(page, h, { UI, WID, RUN, APPROVAL, REJECTED_WID });
} catch (err) {
  await page.screenshot({ path: FAILURE_SHOT, fullPage: true }).catch(() => null);
  console.error(`FAILED at ${page.url()}: ${err.message}\nscreenshot of the page: ${FAILURE_SHOT}`);
  process.exitCode = 1;
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
