// The support-staff path through the Web UI (README "For support staff"):
// find the draft order awaiting approval, read its current details, send a
// decision the workflow refuses and see the refusal, send a valid one and
// see the workflow move on, then find finished orders by outcome.
import { step, fail } from './lib.mjs';

export async function supportPath(page, h, o) {
  const { UI, WID, RUN, APPROVAL, REJECTED_WID } = o;
  const wf = `${UI}/namespaces/default/workflows/${encodeURIComponent(WID)}/${RUN}`;
  const listURL = (q) => `${UI}/namespaces/default/workflows?query=${encodeURIComponent(q)}`;

  step('4. support staff: filter AwaitingApproval = true');
  await page.goto(listURL('AwaitingApproval = true'), { waitUntil: 'networkidle2' });
  await h.waitText(WID);
  await h.shot('4-awaiting-approval.png');
  await h.click(`a[href*="${encodeURIComponent(WID)}"]`, `the link to ${WID}`);
  await h.waitText('History');

  step('5. the current details: facts, approval id, one payload per decision');
  await h.clickText('User Metadata');
  await h.waitText('Waiting for a support-staff decision');
  const details = await h.text();
  for (const want of ['Dark Chocolate Bar', 'unit(s)', 'goods value', 'transport mode', 'BIOSECURITY', 'Source: https://',
    `{"approval_id":"${APPROVAL}","decision":"approve","approver":"YOUR-STAFF-ID"}`]) {
    if (!details.includes(want)) fail(`current details lack ${JSON.stringify(want)}:\n${excerpt(details, 'Waiting for')}`);
  }
  await h.shot('5-current-details.png');
  await h.scrollDetails();
  await h.shot('5b-payloads.png');
  step('   details show the facts and the payloads, whole');

  step('6. a refused decision (the approver "caol.admin", carol.admin with its r lost) shows in the details');
  await sendApproval(page, h, wf, [`{"approval_id":"${APPROVAL}","decision":"approve","approver":"caol.admin"}`]);
  await h.reloadUntil(`${wf}/user-metadata`, 'Last decision refused');
  await h.waitText('unknown_approver');
  const refused = await h.text();
  if (!refused.includes('caol.admin is not on the staff roster') || !refused.includes('Instead:')) {
    fail(`the refusal's reason or what to send instead is not shown:\n${excerpt(refused, 'Last decision')}`);
  }
  await h.shot('6-refusal-shown.png');
  step(`   ${excerpt(refused, 'Last decision refused').split('\n')[0]}`);

  step('7. approve from the History tab, typing the staff id with the keyboard (no r lost)');
  await sendApproval(page, h, wf, [`{"approval_id":"${APPROVAL}","decision":"approve","approver":"`, { type: 'carol.admin' },
    '","reason":"checked in the web ui test"}'], '7-signal-form.png');

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

// sendApproval opens More Actions → Send a Signal on the History tab, picks
// approval and enters the payload: strings are inserted as one input each
// (typed brackets would be auto-closed by the editor), {type} parts are
// typed key by key.
async function sendApproval(page, h, wf, parts, shotName) {
  await page.goto(`${wf}/history`, { waitUntil: 'networkidle2' });
  await h.waitText('More Actions');
  await h.clickText('More Actions');
  await h.clickText('Send a Signal');
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=signal-select-button]')]
    .some((e) => e.getBoundingClientRect().width > 0), { timeout: 15000, polling: 200 })
    .catch(async () => fail(`the Send a Signal dialog has no signal list (data-testid=signal-select-button): ${await page.evaluate(() =>
      [...document.querySelectorAll('[role=dialog] button, dialog button')].map((e) => `${e.innerText.trim()}|${e.getAttribute('data-testid')}`).join('; '))}`));
  await h.click('[data-testid=signal-select-button]', 'the signal list (data-testid=signal-select-button)');
  await page.waitForFunction(() => [...document.querySelectorAll('li[role=option]')].some((e) =>
    e.getBoundingClientRect().width > 0 && e.innerText.trim().startsWith('approval')), { timeout: 15000, polling: 200 })
    .catch(() => fail('the signal list does not offer approval'));
  await h.click({ css: 'li[role=option]', textStart: 'approval' }, 'approval in the signal list');
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
// moves it next to Status, as README "For support staff" tells staff to.
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
