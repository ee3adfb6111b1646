// docs/operations.md, "Versions" and "Upgrading": a clone has no release tags
// (they are added where the repository is published), so the upgrade steps
// check out the commit CHANGELOG.md names for each release, and that commit
// must be one this clone has.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

test('every release in CHANGELOG.md names a commit of this clone', () => {
  const releases = [...read('CHANGELOG.md').matchAll(/^## (\d+\.\d+\.\d+)\n([\s\S]*?)(?=^## |(?![\s\S]))/gm)];
  assert.ok(releases.length >= 1, 'CHANGELOG.md has a release');
  for (const [, version, notes] of releases) {
    const commit = /commit `([0-9a-f]{7,40})`/.exec(notes!)?.[1];
    assert.ok(commit, `${version} names its commit`);
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT });
  }
});

test('the upgrade steps check out the release commit CHANGELOG.md names, not a tag a clone lacks', () => {
  const operations = read('docs/operations.md');
  const blocks = [...operations.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const checkouts = blocks.flatMap((block) => [...block.matchAll(/git checkout (\S+)/g)].map((match) => match[1]!));
  assert.ok(checkouts.length >= 1, 'the embedded-database steps check out the release');
  for (const ref of checkouts) assert.equal(ref, '<commit>', 'a block checks out the release commit');
  assert.doesNotMatch(operations, /git fetch --tags/);
  assert.match(operations, /tags `vX\.Y\.Z` are added where the repository is published/);
});
