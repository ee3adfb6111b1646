// Headless Chromium for the web UI tests: a real browser, with JavaScript
// off (the pages must work without it), signing in through the login form.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { PASSWORD } from './fixtures.ts';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Where the screenshots go, for a human to look at. */
export const SCREENSHOT_DIR = process.env.SB_SCREENSHOT_DIR ?? os.tmpdir();

export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Browser suites need Debian's chromium. On a developer machine without it they
 * are skipped with this reason; in CI (CI=true) they always run, and fail loudly.
 */
export const SKIP_WITHOUT_BROWSER: string | false =
  existsSync(CHROMIUM_PATH) || process.env.CI === 'true'
    ? false
    : `${CHROMIUM_PATH} is missing (apt-get install chromium); browser tests skipped`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `switchboard-${name}.png`), fullPage: true });
}

/** A fresh browser profile signed in as `email` through the login page; lands on the home page (the dashboard). */
export async function signedInBrowser(browser: Browser, baseUrl: string, email: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${baseUrl}/`);
  assert.equal(new URL(page.url()).pathname, '/login');
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL((url) => url.pathname === '/');
  return { context, page };
}
