// Every error code the API can answer is documented (fastify's
// test/internals/errors.test.js does the same for its catalogue).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import * as errors from '../src/errors.ts';

function documentation(): Promise<string> {
  return readFile('docs/errors.md', 'utf8');
}

test('every code in src/errors.ts is documented with its status', async () => {
  const docs = await documentation();
  for (const [name, ErrorClass] of Object.entries(errors)) {
    const instance = new (ErrorClass as new () => { code: string; statusCode: number })();
    assert.equal(instance.code, name, `export ${name} must carry its own name as code`);
    assert.ok(docs.includes(`\`${name}\` (${instance.statusCode})`), `${name} (${instance.statusCode}) is missing from docs/errors.md`);
  }
});
