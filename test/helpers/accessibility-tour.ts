// The accessibility tour: every page, signed in and out, with and without
// data, at one screen size: axe-core finds no serious or critical violation,
// no page scrolls sideways, and every link, button and field lies on screen
// (or in a table that scrolls by itself). Every size shares one seeded tour
// and one Chromium (test/web/accessibility.browser.test.ts): seeding and
// starting the browser cost as much as a size's visit to every page.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, SKIP_WITHOUT_BROWSER } from './browser.ts';
import { seedTour, tourContext, type Tour, type Visitor } from './ui-tour.ts';
import { startDeliveryRig, type DeliveryRig } from './webhooks.ts';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export interface ScreenSize {
  label: string;
  width: number;
  height: number;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)",
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} at ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(', ')}`,
    );
}

// Run in the page as source text: tsx would wrap named functions in a helper the page lacks.
const UNREACHABLE_CONTROLS = `(() => {
  const width = window.innerWidth;
  const scrollsSideways = (el) => {
    const overflow = getComputedStyle(el).overflowX;
    return (overflow === 'auto' || overflow === 'scroll') && el.scrollWidth > el.clientWidth;
  };
  const off = [];
  for (const el of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue; // inside a closed <details>
    let scroller = el.parentElement;
    while (scroller && !scrollsSideways(scroller)) scroller = scroller.parentElement;
    const frame = scroller ? scroller.getBoundingClientRect() : { left: 0, right: width };
    const inFrame = scroller ? frame.left >= -1 && frame.right <= width + 1 : box.left >= -1 && box.right <= width + 1;
    if (!inFrame) off.push(el.outerHTML.slice(0, 140));
  }
  return off;
})()`;

/** Controls that cannot be reached at this width: off screen and not inside a container that scrolls sideways by itself. */
function unreachableControls(page: Page): Promise<string[]> {
  return page.evaluate(UNREACHABLE_CONTROLS) as Promise<string[]>;
}

/** One test per size, all of them on one seeded tour in one Chromium (each size in browser profiles of its own). */
export function accessibilityTour(sizes: ScreenSize[]): void {
  describe('accessibility and small screens, every page', { skip: SKIP_WITHOUT_BROWSER }, () => {
    let rig: DeliveryRig;
    let browser: Browser;
    let tour: Tour;

    before(async () => {
      rig = await startDeliveryRig({ listen: true });
      browser = await launchChromium();
      tour = await seedTour(rig);
    });
    after(async () => {
      await browser?.close();
      await rig?.close();
    });

    for (const size of sizes) {
      test(`${size.label} (${size.width} × ${size.height})`, async () => {
        const contexts = new Map<Visitor, BrowserContext>();
        const pageFor = async (who: Visitor): Promise<Page> => {
          let context = contexts.get(who);
          if (!context) {
            const member = who === 'data' ? tour.data : who === 'empty' ? tour.empty : undefined;
            context = await tourContext(browser, rig.t.url, member, { width: size.width, height: size.height, javaScript: true });
            contexts.set(who, context);
          }
          return context.pages()[0] ?? context.newPage();
        };
        try {
          assert.deepEqual(await problemsOfTour(tour, rig.t.url, pageFor), []);
        } finally {
          for (const context of contexts.values()) await context.close();
        }
      });
    }
  });
}

/** Every stop of the tour visited: what axe-core, the page's width and its controls' places show wrong. */
async function problemsOfTour(tour: Tour, baseUrl: string, pageFor: (who: Visitor) => Promise<Page>): Promise<string[]> {
  const problems: string[] = [];
  for (const stop of tour.stops) {
    const page = await pageFor(stop.who);
    const response = await page.goto(`${baseUrl}${stop.path}`);
    assert.equal(response?.status(), stop.status, `${stop.name}: ${stop.path}`);
    for (const violation of await seriousViolations(page)) problems.push(`${stop.name}: ${violation}`);
    const [scrollWidth, innerWidth] = (await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')) as [
      number,
      number,
    ];
    if (scrollWidth > innerWidth) problems.push(`${stop.name}: scrolls sideways (${scrollWidth} > ${innerWidth})`);
    for (const control of await unreachableControls(page)) problems.push(`${stop.name}: off screen: ${control}`);
  }
  return problems;
}
