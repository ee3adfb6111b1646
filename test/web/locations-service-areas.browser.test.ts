import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createLocation, listLocations } from '../../src/locations/locations.service.ts';
import { createUser } from '../../src/organizations/organizations.service.ts';
import { listServiceAreas } from '../../src/service-areas/service-areas.service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { launchChromium, screenshot, signedInBrowser, SKIP_WITHOUT_BROWSER } from '../helpers/browser.ts';
import { createMember, createOrg, PASSWORD } from '../helpers/fixtures.ts';
import { NO_CACHES } from '../../src/cache/caches.ts';

/** The rows of the page's table, as the text of their first cell. */
async function firstCells(page: Page): Promise<string[]> {
  return (await page.locator('tbody tr td:first-child').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
}

function row(page: Page, name: string) {
  return page.locator('tbody tr', { hasText: name });
}

// The pages as a person uses them, in a real browser with JavaScript off.
describe('locations and service areas in headless Chromium', { skip: SKIP_WITHOUT_BROWSER }, () => {
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    t = await startTestApp({ listen: true });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('create a location (after fixing a validation error), edit it, make another primary, delete one', async () => {
    const member = await createMember(t.db.pool);
    const { context, page } = await signedInBrowser(browser, t.url, member.email);
    await page.click('nav.sections >> text=Locations');
    assert.match((await page.locator('main').textContent()) ?? '', /No locations yet/);
    assert.equal(await page.locator('nav.sections a[aria-current=page]').textContent(), 'Locations');

    await page.click('text=New location');
    await page.fill('#name', 'Downtown Office');
    await page.fill('#address_line1', '1 Market Street');
    await page.fill('#city', 'San Francisco');
    await page.fill('#postal_code', '94105');
    await page.fill('#country', 'US');
    await page.fill('#latitude', '95');
    await page.fill('#longitude', '-122.39');
    const refused = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.click('button[type=submit]:has-text("Create location")');
    assert.equal((await refused).status(), 400);
    assert.equal(await page.locator('#latitude-error').textContent(), 'Must be at most 90.');
    assert.equal(await page.locator('#latitude').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#longitude-error').count(), 0);
    assert.equal(await page.inputValue('#name'), 'Downtown Office', 'what was typed is kept');
    await screenshot(page, 'location-validation');

    await page.fill('#latitude', '37.79');
    await page.click('button[type=submit]:has-text("Create location")');
    await page.waitForURL(/\/ui\/locations\?done=created$/);
    assert.equal(await page.locator('.notice').textContent(), 'Location created.');
    assert.deepEqual(await firstCells(page), ['Downtown Office']);

    await page.click('text=New location');
    await page.fill('#name', 'Warehouse');
    await page.check('input[name=is_primary]');
    await page.click('button[type=submit]:has-text("Create location")');
    await page.waitForURL(/done=created$/);
    assert.deepEqual(await firstCells(page), ['Warehouse Primary', 'Downtown Office'], 'primary first');

    await row(page, 'Downtown Office').locator('button:has-text("Make primary")').click();
    await page.waitForURL(/done=primary$/);
    assert.deepEqual(await firstCells(page), ['Downtown Office Primary', 'Warehouse']);
    const stored = await listLocations(t.db.pool, member.org.id);
    assert.deepEqual(
      stored.map((l) => [l.name, l.is_primary]),
      [
        ['Downtown Office', true],
        ['Warehouse', false],
      ],
    );
    assert.deepEqual([stored[0]!.latitude, stored[0]!.longitude], [37.79, -122.39]);
    await screenshot(page, 'locations');

    await row(page, 'Warehouse').locator('text=Edit').click();
    assert.equal(await page.inputValue('#name'), 'Warehouse');
    await page.fill('#name', 'North Warehouse');
    await page.fill('#city', 'Oakland');
    await page.click('button[type=submit]:has-text("Save changes")');
    await page.waitForURL(/done=updated$/);
    assert.match((await row(page, 'North Warehouse').textContent()) ?? '', /Oakland/);

    await row(page, 'North Warehouse').locator('text=Delete').click();
    assert.equal(await page.locator('h1').textContent(), 'Delete North Warehouse?');
    await screenshot(page, 'location-delete');
    await page.click('button:has-text("Delete location")');
    await page.waitForURL(/done=deleted$/);
    assert.deepEqual(await firstCells(page), ['Downtown Office Primary']);
    assert.deepEqual(
      (await listLocations(t.db.pool, member.org.id)).map((l) => l.name),
      ['Downtown Office'],
    );
    await context.close();
  });

  test('create a service area linked to a location with a radius, edit it, delete it', async () => {
    const member = await createMember(t.db.pool);
    const depot = await createLocation(t.db.pool, NO_CACHES, member.org.id, { name: 'Depot' });
    const stranger = await createMember(t.db.pool);
    await createLocation(t.db.pool, NO_CACHES, stranger.org.id, { name: "Someone Else's Office" });
    const { context, page } = await signedInBrowser(browser, t.url, member.email);

    await page.click('nav.sections >> text=Service areas');
    assert.match((await page.locator('main').textContent()) ?? '', /No service areas yet/);
    await page.click('text=New service area');
    const options = await page.locator('#location_id option').allTextContents();
    assert.deepEqual(options, ['No location', 'Depot'], "only the organization's own locations");
    await page.fill('#label', 'Mission District');
    await page.fill('#area_type', 'neighborhood');
    await page.fill('#country', 'US');
    await page.fill('#radius_km', '0');
    await page.selectOption('#location_id', depot.id);
    await page.click('button[type=submit]:has-text("Create service area")');
    assert.equal(await page.locator('#radius_km-error').textContent(), 'Must be greater than 0.');
    assert.equal(await page.locator('#location_id').inputValue(), depot.id, 'the chosen location is kept');
    await screenshot(page, 'service-area-validation');

    await page.fill('#radius_km', '12.5');
    await page.click('button[type=submit]:has-text("Create service area")');
    await page.waitForURL(/\/ui\/service-areas\?done=created$/);
    const created = row(page, 'Mission District');
    assert.match((await created.textContent()) ?? '', /12\.5 km/);
    assert.equal(await created.locator('a:has-text("Depot")').getAttribute('href'), `/ui/locations/${depot.id}/edit`);
    const [area] = await listServiceAreas(t.db.pool, member.org.id);
    assert.deepEqual(
      {
        label: area!.label,
        area_type: area!.area_type,
        value: area!.value,
        country: area!.country,
        radius_km: area!.radius_km,
        location_id: area!.location_id,
      },
      { label: 'Mission District', area_type: 'neighborhood', value: null, country: 'US', radius_km: 12.5, location_id: depot.id },
    );
    await screenshot(page, 'service-areas');

    await created.locator('text=Edit').click();
    assert.equal(await page.inputValue('#radius_km'), '12.5');
    await page.selectOption('#location_id', '');
    await page.fill('#radius_km', '');
    await page.click('button[type=submit]:has-text("Save changes")');
    await page.waitForURL(/done=updated$/);
    const [edited] = await listServiceAreas(t.db.pool, member.org.id);
    assert.deepEqual([edited!.location_id, edited!.radius_km], [null, null], 'cleared fields are null');

    await row(page, 'Mission District').locator('text=Delete').click();
    await page.click('button:has-text("Delete service area")');
    await page.waitForURL(/done=deleted$/);
    assert.deepEqual(await listServiceAreas(t.db.pool, member.org.id), []);
    await context.close();
  });

  test("switching organization shows the other organization's data only", async () => {
    const member = await createMember(t.db.pool);
    const other = await createOrg(t.db.pool, 'Beta Plumbing');
    await createUser(t.db.pool, { email: member.email, password: PASSWORD, organizationId: other.id, role: 'member' });
    const alpha = await createLocation(t.db.pool, NO_CACHES, member.org.id, { name: 'Alpha HQ' });
    const beta = await createLocation(t.db.pool, NO_CACHES, other.id, { name: 'Beta Depot' });
    const { context, page } = await signedInBrowser(browser, t.url, member.email);
    await page.click('nav.sections >> text=Locations');

    const current = await page.locator('#switch-organization').inputValue();
    const [mine, theirs] = current === member.org.id ? ['Alpha HQ', 'Beta Depot'] : ['Beta Depot', 'Alpha HQ'];
    assert.deepEqual(await firstCells(page), [mine]);
    await screenshot(page, 'switcher');

    await page.selectOption('#switch-organization', current === member.org.id ? other.id : member.org.id);
    await page.click('form.switcher button');
    await page.waitForURL(/\/ui\/locations$/);
    assert.deepEqual(await firstCells(page), [theirs]);
    assert.doesNotMatch((await page.locator('main').textContent()) ?? '', new RegExp(mine));
    const previous = current === member.org.id ? alpha : beta;
    const response = await page.goto(`${t.url}/ui/locations/${previous.id}/edit`);
    assert.equal(response?.status(), 404, "the previous organization's location is not found from here");
    assert.equal(await page.locator('h1').textContent(), 'Not found');
    await screenshot(page, 'not-found');

    await page.click('nav.sections >> text=Service areas');
    await page.selectOption('#switch-organization', current);
    await page.click('form.switcher button');
    await page.waitForURL(/\/ui\/service-areas$/, { timeout: 5000 });
    await page.click('nav.sections >> text=Locations');
    assert.deepEqual(await firstCells(page), [mine]);
    await context.close();
  });
});
