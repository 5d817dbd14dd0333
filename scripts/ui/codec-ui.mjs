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
// clickText clicks the visible element whose own text is t (the UI renders
// some controls twice, one copy hidden).
const clickText = async (t, sel = 'button, [role=menuitem], [role=option], li, a') => {
  await page.waitForFunction((t, sel) => [...document.querySelectorAll(sel)].some((e) =>
    e.innerText && e.innerText.trim() === t && e.getBoundingClientRect().width > 0), { timeout: 15000 }, t, sel)
    .catch(() => fail(`no visible ${JSON.stringify(t)} to click`));
  await page.evaluate((t, sel) => {
    const e = [...document.querySelectorAll(sel)].find((e) =>
      e.innerText && e.innerText.trim() === t && e.getBoundingClientRect().width > 0);
    e.click();
  }, t, sel);
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
  await shot('1-encoded-without-credential.png');
  if (body.includes(NAME)) fail('the planted name is visible without a staff credential');
  if (!codecAnswers.some((s) => s === 401)) fail(`codec server answers without credential: ${codecAnswers}`);
  step(`   codec server answered ${[...new Set(codecAnswers)].join(',')}; planted name not shown`);

  step('2. sign in at the codec server with a staff token');
  await page.goto(`${CODEC}/login`, { waitUntil: 'networkidle2' });
  await page.type('#token', TOKEN);
  await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle2' }), page.click('#signin')]);
  await waitText('Signed in as');
  await shot('2-codec-sign-in.png');
  step(`   ${(await text()).split('\n').find((l) => l.includes('Signed in'))}`);

  step('3. the same history, decoded for staff');
  codecAnswers.length = 0;
  await page.goto(historyURL, { waitUntil: 'networkidle2' });
  await waitText(NAME);
  await page.evaluate((name) => {
    const leaf = [...document.querySelectorAll('span, div, pre')].find((e) => e.children.length === 0 && e.textContent.includes(name));
    if (leaf) leaf.scrollIntoView({ block: 'center' });
  }, NAME);
  await shot('3-decoded-input.png');
  if (!codecAnswers.includes(200)) fail(`codec server answers: ${codecAnswers}`);
  step(`   input shows ${JSON.stringify(NAME)} (codec server answered ${[...new Set(codecAnswers)].join(',')})`);

  step('4. support staff: filter AwaitingApproval = true');
  await page.goto(`${UI}/namespaces/default/workflows?query=${encodeURIComponent('AwaitingApproval = true')}`, { waitUntil: 'networkidle2' });
  await waitText(WID);
  await shot('4-awaiting-approval.png');
  await page.click(`a[href*="${encodeURIComponent(WID)}"]`);
  await waitText('History');
  await new Promise((r) => setTimeout(r, 1500));
  step('5. send the approval signal from the UI: More Actions → Send a Signal');
  await clickText('More Actions');
  await clickText('Send a Signal');
  await page.waitForSelector('[role=dialog] [data-testid=signal-select-button], dialog [data-testid=signal-select-button]', { visible: true })
    .catch(() => null);
  await page.evaluate(() => {
    const b = [...document.querySelectorAll('[data-testid=signal-select-button]')].find((e) => e.getBoundingClientRect().width > 0);
    b.click();
  });
  await new Promise((r) => setTimeout(r, 800));
  await page.evaluate(() => {
    const o = [...document.querySelectorAll('li[role=option]')].find((e) =>
      e.getBoundingClientRect().width > 0 && e.innerText.trim().startsWith('approval'));
    o.click();
  });
  // The Data field is a CodeMirror editor: insert the JSON as one input
  // (typed keys would get auto-closed brackets).
  const payload = JSON.stringify({ approval_id: APPROVAL, decision: 'approve', approver: 'alice.support', reason: 'checked in the web ui test' });
  await page.evaluate((payload) => {
    const ed = [...document.querySelectorAll('.cm-content')].find((e) => e.getBoundingClientRect().width > 0 && e.closest('[role=dialog], dialog, .modal, form') !== null)
      || [...document.querySelectorAll('.cm-content')].filter((e) => e.getBoundingClientRect().width > 0).pop();
    ed.focus();
    document.execCommand('insertText', false, payload);
  }, payload);
  await new Promise((r) => setTimeout(r, 500));
  await shot('5-signal-form.png');
  // Submit; the first press may only reformat the JSON, so press until
  // the dialog closes.
  for (let i = 0; i < 3; i++) {
    const open = await page.evaluate(() => [...document.querySelectorAll('[data-testid=confirm-modal-button]')]
      .some((e) => e.innerText.trim() === 'Submit' && e.getBoundingClientRect().width > 0));
    if (!open) break;
    await clickText('Submit', '[data-testid=confirm-modal-button]');
    await new Promise((r) => setTimeout(r, 1500));
  }
  step('   signal submitted');

  step('6. the workflow moved on: the signal is in the history, AwaitingApproval is false');
  await page.goto(historyURL, { waitUntil: 'networkidle2' });
  await waitText('Workflow Execution Signaled');
  await waitText('alice.support');
  await shot('6-signal-in-history.png');
  const deadline = Date.now() + 30000;
  for (;;) {
    await page.goto(`${UI}/namespaces/default/workflows?query=${encodeURIComponent('AwaitingApproval = true')}`, { waitUntil: 'networkidle2' });
    await new Promise((r) => setTimeout(r, 1000));
    if (!(await text()).includes(WID)) break;
    if (Date.now() > deadline) fail('the workflow still awaits approval after the signal');
  }
  await shot('7-no-longer-awaiting-approval.png');
  step('   the workflow left the AwaitingApproval = true list');
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
