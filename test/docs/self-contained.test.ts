// The repository stands on its own: a user who clones it has nothing beside
// it, so no tracked file may point outside it for its contract, every link to
// a document must reach a file that exists, and every `docs/interface.md §n`
// citation must name a section that docs/interface.md has.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Phrases that point at documents outside the repository. Spelled in pieces
 * so that this file does not contain them itself.
 */
const OUTSIDE = [['..', 'shared'].join('/'), ['shared', 'spec'].join('/'), ['DESIGN', 'md'].join('.'), ['DESIGN', '§'].join(' ')];

/** Every tracked file with its text (git ls-files: node_modules and dist/ are never tracked, and are skipped besides). */
function trackedFiles(): { file: string; text: string }[] {
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  assert.ok(listed.length > 0, 'git ls-files lists the repository');
  return listed
    .filter((file) => !/(^|\/)(node_modules|dist)\//.test(file))
    .filter((file) => existsSync(path.join(ROOT, file)))
    .map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }));
}

const files = trackedFiles();
const markdown = files.filter(({ file }) => file.endsWith('.md'));

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** `file:line: what` entries in file and line order, so a failure reads top to bottom. */
function sorted(entries: string[]): string[] {
  return entries.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

/** A path written as `docs/….md` anywhere in a file (a citation from the repository root), not part of a longer path or URL. */
const DOCS_MENTION = /(?<![\w/.-])docs\/[\w/.-]+?\.md\b/g;
/** The target of a Markdown link or image, `[text](target)`. */
const MARKDOWN_LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
/** `docs/interface.md §4.2`: the first section a citation names. */
const INTERFACE_CITATION = /docs\/interface\.md,? §(\d+(?:\.\d+)?)/g;

describe('the repository is self-contained', () => {
  test('no tracked file points at documents outside the repository', () => {
    const found: string[] = [];
    for (const { file, text } of files) {
      for (const phrase of OUTSIDE) {
        let at = text.indexOf(phrase);
        while (at !== -1) {
          found.push(`${file}:${lineOf(text, at)}: ${phrase}`);
          at = text.indexOf(phrase, at + phrase.length);
        }
      }
    }
    assert.deepEqual(sorted(found), [], 'cite docs/interface.md (or another document of the repository) instead');
  });

  test('every docs/….md a tracked file names exists', () => {
    const missing: string[] = [];
    for (const { file, text } of files) {
      for (const match of text.matchAll(DOCS_MENTION)) {
        if (!existsSync(path.join(ROOT, match[0]))) missing.push(`${file}:${lineOf(text, match.index)}: ${match[0]}`);
      }
    }
    assert.deepEqual(sorted(missing), []);
  });

  test('every relative link of a tracked Markdown file reaches a file that exists', () => {
    const broken: string[] = [];
    for (const { file, text } of markdown) {
      for (const match of text.matchAll(MARKDOWN_LINK)) {
        const target = match[1]!;
        if (/^[a-z][a-z\d+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('/')) continue;
        const relative = decodeURIComponent(target.replace(/[#?].*$/, ''));
        if (!existsSync(path.resolve(ROOT, path.dirname(file), relative))) broken.push(`${file}:${lineOf(text, match.index)}: ${target}`);
      }
    }
    assert.deepEqual(sorted(broken), []);
  });

  test('every docs/interface.md §n citation names a section of docs/interface.md', () => {
    const interfaceText = readFileSync(path.join(ROOT, 'docs/interface.md'), 'utf8');
    const sections = new Set([...interfaceText.matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((m) => m[1]!));
    assert.ok(sections.has('5.1'), 'docs/interface.md numbers its sections ("### 5.1 …")');
    const unknown: string[] = [];
    for (const { file, text } of files) {
      for (const match of text.matchAll(INTERFACE_CITATION)) {
        if (!sections.has(match[1]!)) unknown.push(`${file}:${lineOf(text, match.index)}: §${match[1]}`);
      }
    }
    assert.deepEqual(sorted(unknown), []);
  });
});
