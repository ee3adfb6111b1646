// The Zapier app turns a Switchboard problem into one line for the Zap's
// owner: the detail, then each field's message the detail does not already
// say (issue: "… local name | hookUrl: … local name").
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const require = createRequire(import.meta.url);

test('a field message the detail already carries is not repeated; another one is added', () => {
  process.env.BASE_URL = 'https://switchboard.example.com';
  const { afters } = require('../../zapier/middleware.js') as {
    afters: ((response: unknown, z: unknown) => unknown)[];
  };
  class ZapError extends Error {}
  const z = { errors: { Error: ZapError, RefreshAuthError: ZapError } };
  const message = (data: unknown) => {
    try {
      afters[0]!({ status: 400, data, request: { url: 'https://switchboard.example.com/webhooks/subscribe' } }, z);
    } catch (error) {
      return (error as Error).message;
    }
    assert.fail('a 400 is thrown as an error');
  };
  const local = 'hookUrl host localhost is a local name (allowed only with WEBHOOK_ALLOW_PRIVATE_TARGETS=true, a development setting)';
  assert.equal(
    message({ title: 'Invalid hook URL', detail: local, errors: [{ field: 'hookUrl', message: local.replace('hookUrl ', '') }] }),
    local,
  );
  assert.equal(
    message({
      title: 'Invalid request',
      detail: 'The request has invalid fields',
      errors: [{ field: 'label', message: 'must not be blank' }],
    }),
    'The request has invalid fields | label: must not be blank',
  );
});
