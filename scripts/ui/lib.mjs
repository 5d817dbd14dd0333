// Helpers shared by the Web UI test's steps (codec-ui.mjs, support-ui.mjs):
// every wait is on a condition in the page, with a message that says which
// condition did not hold.
import { join } from 'node:path';

export const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
export const step = (msg) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);
export const fail = (msg) => { throw new Error(msg); };
// scaled stretches a deadline on a slow or busy machine by the one setting
// the Go tests read too (internal/testenv, docs/testing.md#deadlines).
const timeScale = Number(process.env.CARTWRIGHT_TEST_TIME_SCALE || 1);
if (!(timeScale >= 1)) fail(`CARTWRIGHT_TEST_TIME_SCALE=${process.env.CARTWRIGHT_TEST_TIME_SCALE}: want a number of at least 1`);
export const scaled = (ms) => Math.round(ms * timeScale);

export function helpers(page, shotsDir) {
  // until polls fn (in node) every 250 ms until it returns true.
  const until = async (fn, ms, msg) => {
    const deadline = Date.now() + scaled(ms);
    while (!(await fn())) {
      if (Date.now() > deadline) fail(msg);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  // text is the page's text with its frames': the UI renders a workflow's
  // current details (markdown) in an iframe.
  const text = async () => (await Promise.all(page.frames().map((f) =>
    f.evaluate(() => (document.body ? document.body.innerText : '')).catch(() => '')))).join('\n');
  const waitText = async (s, ms = 20000) => {
    await until(async () => (await text()).includes(s), ms, `page never showed ${JSON.stringify(s)} within ${scaled(ms)} ms`);
  };
  // click clicks what a user would: the element loc names (a CSS selector,
  // or { css, text } / { css, textStart } matching its own text, since the
  // UI renders some controls twice, one copy hidden) once it is attached,
  // visible, in the viewport, stable and not covered — with the mouse, at
  // its centre. A drawer sliding in or a list reordering never receives a
  // click meant for where the element will be; a failure names the
  // condition that did not hold (see readiness).
  const click = async (loc, what = JSON.stringify(loc), ms = 15000) => {
    if (typeof loc === 'string') loc = { css: loc };
    ms = scaled(ms);
    const deadline = Date.now() + ms;
    for (;;) {
      const r = await page.evaluate(readiness, loc)
        .catch((err) => ({ why: `the page is not ready (${err.message.split('\n')[0]})` }));
      if (!r.why) {
        await page.mouse.click(r.x, r.y);
        return;
      }
      if (Date.now() > deadline) fail(`cannot click ${what}: ${r.why} (still so after ${ms} ms)`);
      // A navigation in flight fails evaluate at once: wait for the next
      // document rather than spin.
      if (r.why.startsWith('the page is not ready')) {
        await page.waitForFunction(() => document.readyState !== 'loading', { timeout: Math.max(1, deadline - Date.now()) }).catch(() => null);
      }
    }
  };
  const clickText = (t, sel = 'button, [role=menuitem], [role=option], [role=tab], li, a') =>
    click({ css: sel, text: t }, JSON.stringify(t));
  // reloadUntil reloads url until the page shows s: the UI reads a
  // workflow's current details and search attributes once per load.
  const reloadUntil = async (url, s, ms = 30000) => {
    ms = scaled(ms);
    const deadline = Date.now() + ms;
    for (;;) {
      await page.goto(url, { waitUntil: 'networkidle2' });
      if (await until(async () => (await text()).includes(s), 3000, '').then(() => true, () => false)) return;
      if (Date.now() > deadline) fail(`${url} never showed ${JSON.stringify(s)} within ${ms} ms`);
    }
  };
  // scrollDetails scrolls the current details (a frame of their own, with
  // a fixed height) to their end, where the payloads are.
  const scrollDetails = async () => {
    for (const f of page.frames().filter((f) => f !== page.mainFrame())) {
      await f.evaluate(() => window.scrollTo(0, document.body.scrollHeight)).catch(() => null);
    }
  };
  const shot = (name) => page.screenshot({ path: join(shotsDir, name), fullPage: false });
  return { text, waitText, click, clickText, until, reloadUntil, scrollDetails, shot };
}

// readiness runs in the page: the first shown element loc matches, checked
// over two consecutive animation frames. It returns the point to click, or
// why not: not attached, not visible, not in the viewport (then scrolled
// into view for the next check), not stable (its box moved between the two
// frames, or an animation of it or of a container, such as a drawer sliding
// in, is still running) or covered (elementFromPoint at its centre is
// another element).
function readiness(loc) {
  const own = (e) => (e.innerText || '').trim();
  const matches = [...document.querySelectorAll(loc.css)].filter((e) =>
    (loc.text === undefined || own(e) === loc.text) && (loc.textStart === undefined || own(e).startsWith(loc.textStart)));
  if (matches.length === 0) return { why: `not attached: nothing matches ${loc.css}` };
  const shown = matches.filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && e.checkVisibility({ visibilityProperty: true, opacityProperty: true });
  });
  if (shown.length === 0) return { why: `not visible: ${matches.length} match(es), each of zero size, hidden or transparent` };
  const e = shown[0];
  const box = () => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; };
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve(true)));
  const noFrame = new Promise((resolve) => setTimeout(() => resolve(false), 2000));
  return (async () => {
    if (!await Promise.race([frame(), noFrame])) return { why: 'not stable: the page rendered no animation frame within 2 s' };
    const a = box();
    if (!await Promise.race([frame(), noFrame])) return { why: 'not stable: the page rendered no animation frame within 2 s' };
    if (!e.isConnected) return { why: 'not attached: the element left the document between two frames' };
    const b = box();
    const at = (r) => `(${Math.round(r.x)},${Math.round(r.y)} ${Math.round(r.w)}x${Math.round(r.h)})`;
    if (a.x !== b.x || a.y !== b.y || a.w !== b.w || a.h !== b.h) return { why: `not stable: its box moved from ${at(a)} to ${at(b)} between two frames` };
    const moving = document.getAnimations().find((an) => an.playState === 'running' && an.effect && an.effect.target &&
      an.effect.target.contains(e) && an.effect.getComputedTiming().endTime !== Infinity);
    if (moving) return { why: `not stable: ${moving.animationName || moving.transitionProperty || 'an animation'} still runs on ${describe(moving.effect.target)}` };
    const x = b.x + b.w / 2, y = b.y + b.h / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) {
      e.scrollIntoView({ block: 'center', inline: 'nearest' });
      return { why: `not in the viewport: its centre (${Math.round(x)},${Math.round(y)}) is outside ${innerWidth}x${innerHeight} (scrolled it into view)` };
    }
    const hit = document.elementFromPoint(x, y);
    if (hit !== e && !e.contains(hit)) return { why: `covered: at its centre (${Math.round(x)},${Math.round(y)}) is ${describe(hit)}` };
    return { x, y };
  })();
  function describe(n) {
    if (!n) return 'nothing';
    const id = n.getAttribute('data-testid');
    return `<${n.tagName.toLowerCase()}${id ? ` data-testid="${id}"` : ''}${n.className && typeof n.className === 'string' ? ` class="${n.className.slice(0, 60)}"` : ''}>`;
  }
}
