// The support-staff path through the Web UI (docs/support.md#deciding-an-approval-in-the-web-ui,
// docs/approvals.md#sealed-decisions): find the draft order awaiting
// approval, read its current details — where a decision sent without
// signing in (a raw signal naming an active staff member) shows refused —,
// decide as the signed-in support member without typing any id and see it
// refused for the role and its check a failed activity in the history, see the Signal form fail without sign-in with the
// codec server saying where to sign in, sign in as a compliance officer,
// decide, see the workflow move on, then find finished orders by outcome.
import { join } from 'node:path';
import { env, step, fail } from './lib.mjs';

export async function supportPath(page, h, o) {
  const { UI, WID, RUN, APPROVAL, REJECTED_WID } = o;
  const CODEC = env('CODEC_URL'), DECIDER = env('DECIDER_TOKEN');
  const wf = `${UI}/namespaces/default/workflows/${encodeURIComponent(WID)}/${RUN}`;
  const listURL = (q) => `${UI}/namespaces/default/workflows?query=${encodeURIComponent(q)}`;
  const approve = `{"approval_id": "${APPROVAL}", "decision": "approve"}`;
  const encodes = [];
  page.on('response', async (r) => {
    if (r.url().startsWith(CODEC) && r.url().endsWith('/encode') && r.request().method() === 'POST') {
      encodes.push({ status: r.status(), body: await r.text().catch(() => '') });
    }
  });

  step('4. support staff: filter AwaitingApproval = true');
  await page.goto(listURL('AwaitingApproval = true'), { waitUntil: 'networkidle2' });
  await h.waitText(WID);
  await h.shot('4-awaiting-approval.png');
  await h.click(`a[href*="${encodeURIComponent(WID)}"]`, `the link to ${WID}`);
  await h.waitText('History');

  step('5. the current details: a decision nobody signed in for is refused first, then the facts and the payloads');
  await h.clickText('User Metadata');
  await h.waitText('Waiting for a support-staff decision');
  const details = await h.text();
  for (const want of ['DECISION REFUSED: not signed in', 'unauthenticated_decision', 'approver carol.admin', '/codec/login',
    'Dark Chocolate Bar', 'unit(s)', 'goods value', 'transport mode', 'BIOSECURITY', 'Source: https://', approve]) {
    if (!details.includes(want)) fail(`current details lack ${JSON.stringify(want)}:\n${excerpt(details, 'DECISION REFUSED')}`);
  }
  if (details.includes('YOUR-STAFF-ID')) fail('the payloads still ask staff to type their id');
  await h.shot('5-current-details.png');
  await h.scrollDetails();
  await h.shot('5b-payloads.png');
  await payloadsFit(page, APPROVAL);
  // A narrower window: the panel is half as wide, the payloads must wrap.
  const viewport = page.viewport();
  await page.setViewport({ ...viewport, width: 1100 });
  await h.reloadUntil(`${wf}/user-metadata`, 'Waiting for a support-staff decision');
  await h.scrollDetails();
  for (const f of page.frames().filter((f) => f !== page.mainFrame())) {
    if (!(await f.evaluate(() => document.body.innerText).catch(() => '')).includes(APPROVAL)) continue;
    await (await f.frameElement()).screenshot({ path: join(env('SHOTS_DIR'), '5c-payloads-narrow.png') });
  }
  await payloadsFit(page, APPROVAL);
  await page.setViewport(viewport);
  step('   the unsealed decision (carol.admin typed, no seal) is refused and says to sign in; payloads whole at 1400 and 1100 px, no id to type');

  step('6. signed in as support (alice.support), approve without typing an id: refused, the review is compliance\'s');
  let sent = Date.now();
  await sendApproval(page, h, wf, [approve]);
  await h.reloadUntil(`${wf}/user-metadata`, 'this staff member may not decide it');
  const refused = await h.text();
  if (!refused.includes('approver_not_allowed') || !refused.includes('approver alice.support') || !refused.includes('Instead:')) {
    fail(`the refusal's reason or what to send instead is not shown:\n${excerpt(refused, 'DECISION REFUSED')}`);
  }
  await h.shot('6-refusal-shown.png');
  step(`   ${excerpt(refused, 'DECISION REFUSED').split('\n')[0].slice(0, 160)} (shown ${Date.now() - sent} ms after Submit, page load included)`);

  step('6a. the History tab: each refused decision\'s check is a failed activity (red), not retried, its failure the refusal');
  await page.goto(`${wf}/history`, { waitUntil: 'networkidle2' });
  await h.waitText('verify approve by alice.support');
  const failedRows = () => page.evaluate(() => [...document.querySelectorAll('tr')].filter((r) => r.innerText.includes('Activity Task Failed')).length);
  await h.until(async () => await failedRows() === 2, 15000, 'the event list does not show two Activity Task Failed rows (the unsealed and the support member\'s refused decisions)');
  const shown = async () => { const t = await h.text(); return t.includes('RETRY_STATE_NON_RETRYABLE_FAILURE') && t.includes('FORBIDDEN') && t.includes('may not decide this request'); };
  for (let i = 0; i < 2 && !(await shown()); i++) {
    await page.evaluate((i) => { const r = [...document.querySelectorAll('tr')].filter((r) => r.innerText.includes('Activity Task Failed'))[i]; r.scrollIntoView(); r.click(); }, i);
    await h.until(shown, 5000, '').catch(() => null);
  }
  if (!(await shown())) fail('no failed activity shows the support member\'s refusal: RETRY_STATE_NON_RETRYABLE_FAILURE, FORBIDDEN, "may not decide this request"');
  await h.shot('6a-refused-decision-failed.png');
  step('   Activity Task Failed, RETRY_STATE_NON_RETRYABLE_FAILURE, FORBIDDEN: alice.support … may not decide this request');

  step('6b. without sign-in the Signal form cannot encode a decision, and the codec server says where to sign in');
  const cookies = await page.cookies(CODEC);
  await page.deleteCookie(...cookies);
  encodes.length = 0;
  await sendApproval(page, h, wf, [approve], null, async () => encodes.length > 0);
  await h.until(() => encodes.length > 0, 15000, 'the Signal form never called the codec server\'s /encode');
  const refusal = encodes[encodes.length - 1];
  if (refusal.status !== 401 || !refusal.body.includes(`${new URL(CODEC).host}/codec/login`) || !refusal.body.includes('sign in')) {
    fail(`/encode without sign-in answered ${refusal.status}: ${refusal.body}`);
  }
  await h.shot('6b-signal-without-sign-in.png');
  await page.keyboard.press('Escape');
  step(`   /encode answered ${refusal.status}: ${refusal.body.trim().slice(0, 120)}…`);

  step('7. sign in as compliance (bob.compliance) and approve from the History tab, typing only the reason');
  await page.goto(`${CODEC}/login`, { waitUntil: 'networkidle2' });
  await page.type('#token', DECIDER);
  await Promise.all([page.waitForNavigation({ waitUntil: 'networkidle2' }), h.click('#signin', 'Sign in')]);
  await h.waitText('Signed in as');
  sent = Date.now();
  await sendApproval(page, h, wf, [`{"approval_id": "${APPROVAL}", "decision": "approve", "reason": "`, { type: 'checked for carriers' }, '"}'],
    '7-signal-form.png');

  step('8. the workflow moved on: the details ask the user to confirm the total');
  await h.reloadUntil(`${wf}/user-metadata`, 'Waiting for the user to confirm the total');
  await h.waitText('{"quote_hash":"sha256:');
  await h.shot('8-moved-on.png');
  await h.reloadUntil(listURL('AwaitingApproval = true'), 'No Results');
  await h.shot('9-no-longer-awaiting-approval.png');
  step('   the details show the next step; the workflow left the AwaitingApproval = true list');

  step('9. draft orders by outcome: the CartwrightState column, then a filter on it');
  await page.goto(listURL('CartwrightFlow = "draft_order"'), { waitUntil: 'networkidle2' });
  await h.waitText(REJECTED_WID);
  await addColumn(page, h, 'CartwrightState');
  const cell = (wid, state) => page.waitForFunction((wid, state) => [...document.querySelectorAll('tr')].some((r) =>
    r.innerText.includes(wid) && [...r.querySelectorAll('td')].some((c) => c.innerText.trim() === state)),
  { timeout: 15000, polling: 200 }, wid, state).catch(() => fail(`the list shows no ${state} in the CartwrightState column for ${wid}`));
  await cell(REJECTED_WID, 'APPROVAL_REJECTED');
  await cell(WID, 'NEEDS_USER_CONFIRMATION');
  await h.shot('10-outcome-column.png');
  await page.goto(listURL('CartwrightFlow = "draft_order" AND CartwrightState = "APPROVAL_REJECTED"'), { waitUntil: 'networkidle2' });
  await cell(REJECTED_WID, 'APPROVAL_REJECTED');
  if ((await h.text()).includes(WID)) fail('the filter on CartwrightState = "APPROVAL_REJECTED" lists the approved order too');
  await h.shot('11-outcome-filter.png');
  step('   the list shows each order\'s CartwrightState; the filter keeps the rejected one only');
}

// payloadsFit: each payload in the current details (their own frame) ends
// inside the panel, wrapped if need be, not cut off at its edge.
async function payloadsFit(page, approval) {
  for (const f of page.frames().filter((f) => f !== page.mainFrame())) {
    const cut = await f.evaluate((id) => {
      const width = document.documentElement.clientWidth;
      return [...document.querySelectorAll('code')].filter((c) => c.textContent.includes(id))
        .filter((c) => [...c.getClientRects()].some((r) => r.right > width + 1) || c.scrollWidth > c.clientWidth + 1)
        .map((c) => c.textContent);
    }, approval).catch(() => []);
    if (cut.length) fail(`payloads cut off at the panel's edge: ${cut.join(' | ')}`);
  }
}

// sendApproval opens More Actions → Send a Signal on the History tab, picks
// approval and enters the payload: strings are inserted as one input each
// (typed brackets would be auto-closed by the editor), {type} parts are
// typed key by key. With failed set (a condition on the page) it presses
// Submit until that holds instead of waiting for "Workflow signaled".
export async function sendApproval(page, h, wf, parts, shotName, failed) {
  await page.goto(`${wf}/history`, { waitUntil: 'networkidle2' });
  await h.waitText('More Actions');
  await h.clickText('More Actions');
  await h.clickText('Send a Signal');
  // With the workflow's metadata decoded the dialog lists the declared
  // signals; without a codec sign-in it offers a text field for the name.
  const nameField = () => [...document.querySelectorAll('input')].find((e) => e.getBoundingClientRect().width > 0 &&
    (e.type === 'text' || e.type === '') && e.closest('dialog, [role=dialog], .modal, form') !== null);
  await page.waitForFunction(`[...document.querySelectorAll('[data-testid=signal-select-button]')]
    .some((e) => e.getBoundingClientRect().width > 0) || (${nameField})() !== undefined`, { timeout: 15000, polling: 200 })
    .catch(async () => fail(`the Send a Signal dialog has neither a signal list (data-testid=signal-select-button) nor a name field: ${await page.evaluate(() =>
      [...document.querySelectorAll('[role=dialog] button, dialog button')].map((e) => `${e.innerText.trim()}|${e.getAttribute('data-testid')}`).join('; '))}`));
  const listed = await page.evaluate(() => [...document.querySelectorAll('[data-testid=signal-select-button]')]
    .some((e) => e.getBoundingClientRect().width > 0));
  if (listed) {
    await h.click('[data-testid=signal-select-button]', 'the signal list (data-testid=signal-select-button)');
    await page.waitForFunction(() => [...document.querySelectorAll('li[role=option]')].some((e) =>
      e.getBoundingClientRect().width > 0 && e.innerText.trim().startsWith('approval')), { timeout: 15000, polling: 200 })
      .catch(() => fail('the signal list does not offer approval'));
    await h.click({ css: 'li[role=option]', textStart: 'approval' }, 'approval in the signal list');
  } else {
    await page.evaluate(`(${nameField})().focus()`);
    await page.keyboard.type('approval');
  }
  // The Data field is the CodeMirror editor inside the dialog (the History
  // tab has others: input, result).
  const editor = () => [...document.querySelectorAll('.cm-content')].find((e) =>
    e.getBoundingClientRect().width > 0 && e.closest('dialog, [role=dialog], .modal, form') !== null);
  await page.waitForFunction(`(${editor})() !== undefined`, { timeout: 15000, polling: 200 })
    .catch(() => fail('the Send a Signal dialog has no Data editor'));
  await page.evaluate(`(${editor})().focus()`);
  let want = '';
  for (const p of parts) {
    if (typeof p === 'string') {
      await page.evaluate((s) => document.execCommand('insertText', false, s), p);
      want += p;
    } else {
      await page.keyboard.type(p.type, { delay: 20 });
      want += p.type;
    }
  }
  const got = await page.evaluate(`(${editor})().innerText`);
  if (got.replace(/\s/g, '') !== want.replace(/\s/g, '')) fail(`the Data field holds ${JSON.stringify(got)}, not what was entered: ${want}`);
  if (shotName) await h.shot(shotName);
  if (failed) {
    for (let i = 0; i < 3 && !(await failed()); i++) {
      await h.clickText('Submit', '[data-testid=confirm-modal-button]');
      await h.until(failed, 3000, '').catch(() => null);
    }
    return;
  }
  // The first Submit may only reformat the JSON: press until the dialog closes.
  const open = () => page.evaluate(() => [...document.querySelectorAll('[data-testid=confirm-modal-button]')]
    .some((e) => e.innerText.trim() === 'Submit' && e.getBoundingClientRect().width > 0));
  for (let i = 0; i < 3 && await open(); i++) {
    await h.clickText('Submit', '[data-testid=confirm-modal-button]');
    await page.waitForFunction(() => ![...document.querySelectorAll('[data-testid=confirm-modal-button]')]
      .some((e) => e.innerText.trim() === 'Submit' && e.getBoundingClientRect().width > 0), { timeout: 3000, polling: 200 }).catch(() => null);
  }
  if (await open()) fail('the Send a Signal dialog did not close after Submit');
  await h.waitText('Workflow signaled');
}

// addColumn adds a search attribute as a column of the workflow list and
// moves it next to Status, as docs/support.md#deciding-an-approval-in-the-web-ui tells staff to.
// Every click waits for its button to settle (h.click): the Configure
// Workflows Table drawer slides in, and each move reorders the list.
async function addColumn(page, h, name) {
  const id = (what) => `[data-testid="orderable-list-item-${name}-${what}"]`;
  await h.click('[data-testid=workflows-summary-table-configuration-button]', 'Configure Columns (data-testid=workflows-summary-table-configuration-button)');
  await h.click(id('add-button'), `${name}'s add button under Custom Search Attributes (not in view)`);
  // Its place among the columns in view (the ones with a move-up button).
  const place = () => page.evaluate((mine) => [...document.querySelectorAll('[data-testid^="orderable-list-item-"][data-testid$="-move-up-button"]')]
    .map((e) => e.getAttribute('data-testid')).indexOf(mine), `orderable-list-item-${name}-move-up-button`);
  await h.until(async () => await place() >= 0, 10000, `${name} did not move to Columns (in view)`);
  // Up past End, Start, Type, Run ID and Workflow ID: second, after Status.
  for (let at = await place(); at > 1; at--) {
    await h.click(id('move-up-button'), `${name}'s move-up button`);
    await h.until(async () => await place() === at - 1, 10000, `${name} did not move up from place ${at + 1} in Columns (in view)`);
  }
  await h.shot('10a-configure-columns.png');
  await h.click('[data-testid=drawer-close-button]', 'the drawer\'s close button');
  await page.waitForSelector(id('move-up-button'), { hidden: true, timeout: 10000 })
    .catch(() => fail('the Configure Workflows Table panel did not close'));
}

function excerpt(body, from) {
  const i = body.indexOf(from);
  return (i < 0 ? body : body.slice(i)).slice(0, 1500);
}
