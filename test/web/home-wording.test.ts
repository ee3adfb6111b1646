// The home page's deliveries summary counts in words a person reads: one
// delivery, two deliveries (issue: "1 deliveries in the last 24 hours").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { homePage } from '../../src/web/pages/home.page.ts';

function summary(delivered: number, retrying: number, failed: number): string {
  const page = String(
    homePage({
      nav: { email: 'owner@example.com', csrf: 'x', organizationId: 'o', organizationName: 'Acme', organizations: [] },
      figures: { callsPerDay: [{ day: '2026-11-29', count: 0 }], deliveries24h: { delivered, retrying, failed } },
      troubled: [],
      clients: new Map(),
      apps: [],
      alertsSent: true,
    }),
  );
  const found = /\d+ deliver(?:y|ies) in the last 24 hours[^<]*/.exec(page);
  assert.ok(found, 'the page states the deliveries of the last 24 hours');
  return found[0];
}

test('one delivery is "1 delivery", more are "deliveries"', () => {
  assert.equal(summary(1, 0, 0), '1 delivery in the last 24 hours: 1 delivered, 0 pending or retrying, 0 failed.');
  assert.equal(summary(1, 1, 0), '2 deliveries in the last 24 hours: 1 delivered, 1 pending or retrying, 0 failed.');
});
