// The README is a front door (what Switchboard is, the two commands, the
// first delivery, links) and docs/decisions.md a list of decisions with their
// reasons, each kept short enough to be read: mechanism lives in one document,
// linked from the others.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const lineCount = (text: string) => text.trimEnd().split('\n').length;

test('the README is at most 150 lines, links the configuration and operations documents, and says how long npm test takes', () => {
  const readme = read('README.md');
  assert.ok(lineCount(readme) <= 150, `README.md has ${lineCount(readme)} lines`);
  assert.match(readme, /\]\(docs\/configuration\.md\)/);
  assert.match(readme, /\]\(docs\/operations\.md(#[\w-]+)?\)/);
  assert.match(readme, /<!-- npm-test-duration: [^>]+-->\n`npm test` takes \*\*about [\d–-]+ minutes\*\* on a two-core machine/);
  assert.doesNotMatch(readme, /^\| `[A-Z][A-Z0-9_]+` \|/m, 'no table of variables: docs/configuration.md has them');
});

test('docs/decisions.md is at most 450 lines', () => {
  const decisions = read('docs/decisions.md');
  assert.ok(lineCount(decisions) <= 450, `docs/decisions.md has ${lineCount(decisions)} lines`);
});
