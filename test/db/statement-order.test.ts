// The order a statement takes its locks in is written as the order of the
// statements (or of a data-modifying CTE, which always runs to its end),
// never forced by reading a CTE in a condition that is always true, such as
// `(SELECT count(*) FROM locks) >= 0`: a planner that sees through it, or a
// reader who does not, undoes the order.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';

const SRC = new URL('../../src/', import.meta.url);
const ALWAYS_TRUE_READ = /\(\s*SELECT\s+count\(\*\)\s+FROM\s+\w+\s*\)\s*>=\s*0/i;

test('no query forces a CTE to run with an always-true count', async () => {
  const files = (await readdir(SRC, { recursive: true })).filter((file) => file.endsWith('.queries.ts'));
  assert.ok(files.length > 10, 'the queries files were found');
  const found: string[] = [];
  for (const file of files) {
    const text = await readFile(new URL(file, SRC), 'utf8');
    if (ALWAYS_TRUE_READ.test(text)) found.push(path.join('src', file));
  }
  assert.deepEqual(found, []);
});
