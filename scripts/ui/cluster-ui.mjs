// The browser test on `make cluster` (docs/operators.md#sign-in-on-the-cluster),
// driven by worker/clustertest/browser_test.go: a staff member opens the
// Web UI, signs in on the OpenID provider's own login page (Hydra's login
// app, in Chromium), finds the draft order waiting for a compliance review,
// and approves it from the Send a Signal form. No second sign-in: the Web
// UI passes the access token to the frontend and to the codec server,
// which seals the decision for the token's subject and groups. The Go test
// then sees the order go on. On failure it saves a screenshot
// (FAILURE_SHOT) and exits non-zero with the condition that did not hold.
import puppeteer from 'puppeteer-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env, step, fail, helpers, scaled } from './lib.mjs';
import { sendApproval } from './support-ui.mjs';

const UI = env('UI_URL'), ISSUER = env('ISSUER_URL'), USER = env('STAFF_USER'), PASSWORD = env('STAFF_PASSWORD');
const WID = env('WORKFLOW_ID'), RUN = env('RUN_ID'), APPROVAL = env('APPROVAL_ID'), SHOTS = env('SHOTS_DIR');
const FAILURE_SHOT = process.env.FAILURE_SHOT || join(tmpdir(), 'cartwright-cluster-ui-failure.png');

const profile = mkdtempSync(join(tmpdir(), 'cartwright-cluster-ui-'));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${profile}`,
    // The codec server's and the provider's certificates are the cluster
    // CA's; trust their keys only.
    ...(process.env.TRUSTED_SPKI ? [`--ignore-certificate-errors-spki-list=${process.env.TRUSTED_SPKI}`] : [])],
});
const page = await browser.newPage();
page.setDefaultTimeout(scaled(30000));
await page.setViewport({ width: 1400, height: 1150 });
const h = helpers(page, SHOTS);
// What the codec server answered, for the failure message.
const codecCalls = [];
page.on('response', (r) => { if (new URL(r.url()).pathname.startsWith('/codec/')) codecCalls.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`); });
page.on('requestfailed', (r) => { if (new URL(r.url()).pathname.startsWith('/codec/')) codecCalls.push(`${r.request().method()} ${new URL(r.url()).pathname} failed ${r.failure() && r.failure().errorText}`); });
const listPath = `/namespaces/default/workflows?query=${encodeURIComponent('AwaitingApproval = true')}`;
const wf = `${UI}/namespaces/default/workflows/${encodeURIComponent(WID)}/${RUN}`;
try {
  step('1. the Web UI without a sign-in sends the browser to the provider');
  await page.goto(`${UI}/auth/sso?returnUrl=${encodeURIComponent(listPath)}`, { waitUntil: 'networkidle2' });
  await h.until(async () => new URL(page.url()).pathname === '/login' && (await h.text()).includes('Sign in'), 20000,
    `the provider's login page never showed (at ${page.url()})`);
  // The login app is the provider's own (its host; it serves plain http beside Hydra's https issuer).
  if (new URL(page.url()).hostname !== new URL(ISSUER).hostname) fail(`the login page is not the provider's: ${page.url()}`);
  await h.shot('c1-provider-login.png');

  step(`2. sign in as ${USER} on the provider's own page`);
  await page.type('#username', USER);
  await page.type('#password', PASSWORD);
  await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle2' }), h.click('#signin', 'Sign in')]);
  await h.until(async () => page.url().startsWith(UI), 20000, `not back at the Web UI after sign-in (at ${page.url()})`);

  step('3. the order waiting for approval is listed');
  await h.waitText(WID, 30000);
  await h.shot('c2-awaiting-approval.png');

  step('4. approve it from the Send a Signal form (the codec server seals it for the signed-in member)');
  await sendApproval(page, h, wf, [`{"approval_id": "${APPROVAL}", "decision": "approve", "reason": "`, { type: 'checked by compliance' }, '"}'],
    'c3-signal-form.png');
  await h.shot('c4-signaled.png');
  step(`   Workflow signaled (codec server: ${[...new Set(codecCalls)].join('; ')})`);
} catch (err) {
  await page.screenshot({ path: FAILURE_SHOT, fullPage: true }).catch(() => null);
  console.error(`FAILED at ${page.url()}: ${err.message}\nscreenshot of the page: ${FAILURE_SHOT}`);
  process.exitCode = 1;
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
