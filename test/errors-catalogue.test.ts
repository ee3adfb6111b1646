// Every error code the API can answer is documented (fastify's
// test/internals/errors.test.js does the same for its catalogue).
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { test } from 'node:test';
import * as errors from '../src/errors.ts';

async function documentation(): Promise<string> {
  const extra = await readdir('docs/errors').catch(() => [] as string[]);
  const parts = await Promise.all(['docs/errors.md', ...extra.map((f) => `docs/errors/${f}`)].map((f) => readFile(f, 'utf8')));
  return parts.join('\n');
}

test('every code in src/errors.ts is documented with its status', async () => {
  const docs = await documentation();
  for (const [name, ErrorClass] of Object.entries(errors)) {
    const instance = new (ErrorClass as new () => { code: string; statusCode: number })();
    assert.equal(instance.code, name, `export ${name} must carry its own name as code`);
    assert.ok(docs.includes(`\`${name}\` (${instance.statusCode})`), `${name} (${instance.statusCode}) is missing from docs/errors.md`);
  }
});
