// Helpers shared by the Web UI test's steps (codec-ui.mjs, support-ui.mjs):
// every wait is on a condition in the page, with a message that says which
// condition did not hold.
import { join } from 'node:path';

export const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
export const step = (msg) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);
export const fail = (msg) => { throw new Error(msg); };

export function helpers(page, shotsDir) {
  // until polls fn (in node) every 250 ms until it returns true.
  const until = async (fn, ms, msg) => {
    const deadline = Date.now() + ms;
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
    await until(async () => (await text()).includes(s), ms, `page never showed ${JSON.stringify(s)} within ${ms} ms`);
  };
  // visible finds the visible element matching sel whose own text is t (the
  // UI renders some controls twice, one copy hidden).
  const visible = (t, sel) => page.waitForFunction((t, sel) => [...document.querySelectorAll(sel)].some((e) =>
    e.innerText && e.innerText.trim() === t && e.getBoundingClientRect().width > 0), { timeout: 15000, polling: 200 }, t, sel);
  const clickText = async (t, sel = 'button, [role=menuitem], [role=option], [role=tab], li, a') => {
    await visible(t, sel).catch(() => fail(`no visible ${JSON.stringify(t)} to click`));
    await page.evaluate((t, sel) => {
      const e = [...document.querySelectorAll(sel)].find((e) =>
        e.innerText && e.innerText.trim() === t && e.getBoundingClientRect().width > 0);
      e.click();
    }, t, sel);
  };
  // reloadUntil reloads url until the page shows s: the UI reads a
  // workflow's current details and search attributes once per load.
  const reloadUntil = async (url, s, ms = 30000) => {
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
  return { text, waitText, clickText, until, reloadUntil, scrollDetails, shot };
}
