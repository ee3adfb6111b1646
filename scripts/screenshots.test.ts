// npm run screenshots: every page of the web UI (signed out, an empty
// organization, one full of data) at desktop (1200 × 800) and phone
// (390 × 844) size, JavaScript off as for the tests, into ./screenshots/
// (gitignored). Run through scripts/test.ts, which provides the database and
// the receiver's TLS certificate; it is not part of the test suite.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../test/helpers/browser.ts';
import { seedTour, tourContext, type Visitor } from '../test/helpers/ui-tour.ts';
import { startDeliveryRig } from '../test/helpers/webhooks.ts';

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'screenshots');
const SIZES = [
  { label: 'desktop', width: 1200, height: 800 },
  { label: 'phone', width: 390, height: 844 },
] as const;

test('screenshots of every page at both sizes', { timeout: 300_000 }, async () => {
  await mkdir(OUT, { recursive: true });
  const rig = await startDeliveryRig({ listen: true });
  const browser = await launchChromium();
  try {
    const tour = await seedTour(rig);
    for (const size of SIZES) {
      const pages = new Map<Visitor, Awaited<ReturnType<typeof tourContext>>>();
      for (const stop of tour.stops) {
        let context = pages.get(stop.who);
        if (!context) {
          const member = stop.who === 'data' ? tour.data : stop.who === 'empty' ? tour.empty : undefined;
          context = await tourContext(browser, rig.t.url, member, { width: size.width, height: size.height, javaScript: false });
          pages.set(stop.who, context);
        }
        const page = context.pages()[0] ?? (await context.newPage());
        const response = await page.goto(`${rig.t.url}${stop.path}`);
        assert.equal(response?.status(), stop.status, stop.path);
        await page.screenshot({ path: path.join(OUT, `${stop.name}.${size.label}.png`), fullPage: true });
      }
      for (const context of pages.values()) await context.close();
    }
    process.stdout.write(`screenshots: ${tour.stops.length * SIZES.length} files in ${OUT}\n`);
  } finally {
    await browser.close();
    await rig.close();
  }
});
