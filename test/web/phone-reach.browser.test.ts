// On a 390 px phone every navigation link and every row action (the links
// and buttons in table rows) of every page can be reached by scrolling down
// and tapped: it lies within the screen's width, nothing covers or clips it
// (the element under its centre is itself), and a real click there sends the
// request its link or form names. No sideways scrolling is needed: a link
// inside a strip that scrolls sideways, with nothing showing that it does, is
// what a person on a phone does not find. The requests are answered 204 by
// the test, so that a tap changes nothing (Log out, Revoke, Redeliver).
// Every column of every table shows too: each cell, the charts' numbers
// opened, lies within the screen and inside no strip made to scroll sideways.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { launchChromium, SKIP_WITHOUT_BROWSER } from '../helpers/browser.ts';
import { seedTour, tourContext, type Tour, type Visitor } from '../helpers/ui-tour.ts';
import { startDeliveryRig, type DeliveryRig } from '../helpers/webhooks.ts';

const PHONE = { width: 390, height: 844 };
const TARGETS = 'header nav a[href], header nav button, main table tbody tr a[href], main table tbody tr button';

interface Spot {
  /** What a tap must send: the link's or the form's method and URL. */
  method: string;
  url: string;
  label: string;
  x: number;
  y: number;
  /** Why it cannot be tapped, if it cannot. */
  problem?: string;
}

// Run in the page as source text (tsx would wrap a function in a helper the page lacks).
// Scrolls the page (only up and down) to the element, then says where its centre is and what lies there.
const SPOT = `((el) => {
  const before = el.getBoundingClientRect();
  window.scrollBy(0, before.top + before.height / 2 - window.innerHeight / 2);
  const box = el.getBoundingClientRect();
  // A link wrapped over lines is tapped on its first line (the middle of its box may lie past a line's end).
  const line = Array.from(el.getClientRects()).find((r) => r.width > 0) || box;
  const x = line.left + line.width / 2;
  const y = line.top + line.height / 2;
  const form = el.closest('form');
  const label = (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 60) + ' (' + el.tagName.toLowerCase() + ')';
  const target = el.tagName === 'A'
    ? { method: 'GET', url: el.href }
    : { method: (form && form.method || 'get').toUpperCase(), url: form ? form.action : '' };
  let problem;
  if (box.width === 0 || box.height === 0) problem = 'not shown';
  else if (box.left < 0 || box.right > window.innerWidth) problem = 'off screen sideways (' + Math.round(box.left) + '..' + Math.round(box.right) + ' px of ' + window.innerWidth + ')';
  else if (box.top < 0 || box.bottom > window.innerHeight) problem = 'cannot be scrolled into view';
  else {
    const hit = document.elementFromPoint(x, y);
    if (!hit || !(hit === el || el.contains(hit))) problem = 'covered or clipped: its centre shows ' + (hit ? hit.outerHTML.slice(0, 80) : 'nothing');
  }
  return { ...target, label, x, y, problem };
})`;

const spotOf = new Function('el', `return ${SPOT}(el);`) as (el: Element) => Spot;

// Run in the page: every cell of every table in main that a sighted person is
// meant to see (not a header row hidden for screen readers only, not an empty
// cell a card layout leaves out) is scrolled to (up and down only) and checked
// to lie on screen, shown at its centre, and inside nothing that scrolls sideways.
const CELLS = `(() => {
  const problems = [];
  let cells = 0;
  const main = document.querySelector('main');
  if (document.scrollingElement.scrollWidth > window.innerWidth) problems.push('the page scrolls sideways (' + document.scrollingElement.scrollWidth + ' px wide)');
  for (const cell of main ? main.querySelectorAll('table th, table td') : []) {
    const head = cell.closest('thead');
    if (head && getComputedStyle(head).position === 'absolute') continue;
    const text = (cell.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
    const first = cell.getBoundingClientRect();
    if (first.width === 0 && first.height === 0 && text === '') continue;
    cells++;
    const table = cell.closest('table');
    const name = (table.querySelector('caption') || table.querySelector('th') || table).textContent.trim().replace(/\\s+/g, ' ').slice(0, 50);
    const label = 'table "' + name + '", cell "' + text + '"';
    window.scrollBy(0, first.top + first.height / 2 - window.innerHeight / 2);
    const box = cell.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) { problems.push(label + ': not shown'); continue; }
    if (box.left < -0.5 || box.right > window.innerWidth + 0.5) { problems.push(label + ': off screen sideways (' + Math.round(box.left) + '..' + Math.round(box.right) + ' px of ' + window.innerWidth + ')'); continue; }
    // A strip made to scroll sideways counts even while this content happens to fit: a longer label or a larger font pushes columns out of sight.
    let strip = null;
    for (let up = cell.parentElement; up && up !== main; up = up.parentElement) {
      const overflow = getComputedStyle(up).overflowX;
      if (overflow === 'auto' || overflow === 'scroll' || (overflow !== 'visible' && up.scrollWidth > up.clientWidth + 1)) { strip = up; break; }
    }
    if (strip) { problems.push(label + ': inside a ' + strip.tagName.toLowerCase() + ' made to scroll sideways (overflow-x: ' + getComputedStyle(strip).overflowX + '; ' + strip.scrollWidth + ' px in ' + strip.clientWidth + ')'); continue; }
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    if (!hit || !(hit === cell || cell.contains(hit))) problems.push(label + ': covered or clipped: its centre shows ' + (hit ? hit.outerHTML.slice(0, 80) : 'nothing'));
  }
  return { cells, problems };
})`;

const checkCells = new Function(`return ${CELLS}();`) as () => { cells: number; problems: string[] };

describe('every navigation link and row action at 390 px', { skip: SKIP_WITHOUT_BROWSER }, () => {
  let rig: DeliveryRig;
  let browser: Browser;
  let tour: Tour;
  const contexts = new Map<Visitor, BrowserContext>();

  before(async () => {
    rig = await startDeliveryRig({ listen: true });
    browser = await launchChromium();
    tour = await seedTour(rig);
  });
  after(async () => {
    await browser?.close();
    await rig?.close();
  });

  /** A page whose navigations, once `armed`, are recorded and answered 204 (the browser stays put). */
  async function pageFor(who: Visitor): Promise<{ page: Page; arm(on: boolean): void; sent: Request[] }> {
    let context = contexts.get(who);
    if (!context) {
      const member = who === 'data' ? tour.data : who === 'empty' ? tour.empty : undefined;
      context = await tourContext(browser, rig.t.url, member, { ...PHONE, javaScript: true });
      contexts.set(who, context);
    }
    const page = context.pages()[0] ?? (await context.newPage());
    const state = { armed: false, sent: [] as Request[] };
    await page.unrouteAll();
    await page.route('**/*', async (route) => {
      if (state.armed && route.request().isNavigationRequest()) {
        state.sent.push(route.request());
        await route.fulfill({ status: 204 });
      } else {
        await route.continue();
      }
    });
    return { page, arm: (on) => (state.armed = on), sent: state.sent };
  }

  test('every page: each link of the top bar and each link and button in a table row is on screen and answers a real click', async () => {
    const problems: string[] = [];
    let tapped = 0;
    for (const stop of tour.stops) {
      const { page, arm, sent } = await pageFor(stop.who);
      arm(false);
      const response = await page.goto(`${rig.t.url}${stop.path}`);
      assert.equal(response?.status(), stop.status, `${stop.name}: ${stop.path}`);
      arm(true);
      const targets = page.locator(TARGETS);
      const count = await targets.count();
      for (let i = 0; i < count; i++) {
        const spot = await targets.nth(i).evaluate(spotOf);
        if (spot.problem) {
          problems.push(`${stop.name}: ${spot.label}: ${spot.problem}`);
          continue;
        }
        const before = sent.length;
        await page.mouse.click(spot.x, spot.y);
        const deadline = Date.now() + 5_000;
        while (sent.length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        const request = sent[before];
        if (!request) problems.push(`${stop.name}: ${spot.label}: a click at its centre sent nothing`);
        else if (request.method() !== spot.method || request.url() !== spot.url)
          problems.push(`${stop.name}: ${spot.label}: a click sent ${request.method()} ${request.url()}, not ${spot.method} ${spot.url}`);
        else tapped++;
      }
    }
    assert.deepEqual(problems, []);
    // The tour's pages have a top bar and tables full of rows: this many were tapped.
    assert.ok(tapped > 100, `${tapped} links and buttons tapped`);
  });

  test("every page: every column of every table is on screen, the charts' numbers opened, with no sideways scrolling", async () => {
    const problems: string[] = [];
    let cells = 0;
    let charts = 0;
    for (const stop of tour.stops) {
      const { page, arm } = await pageFor(stop.who);
      arm(false);
      const response = await page.goto(`${rig.t.url}${stop.path}`);
      assert.equal(response?.status(), stop.status, `${stop.name}: ${stop.path}`);
      // "Show the numbers" of each chart, opened as a person would: a tap on it.
      const summaries = page.locator('main details.chart-data > summary');
      for (let i = 0; i < (await summaries.count()); i++) {
        await summaries.nth(i).click();
        charts++;
      }
      const found = await page.evaluate(checkCells);
      cells += found.cells;
      problems.push(...found.problems.map((problem) => `${stop.name}: ${problem}`));
    }
    assert.deepEqual(problems, []);
    // The dashboard's and the failing subscription's charts (30 days, 24 hours, 14 days…) with their numbers.
    assert.ok(charts >= 3, `${charts} charts opened`);
    assert.ok(cells > 500, `${cells} cells checked`);
  });
});
