// What a comment or a document cites must exist: a file name (`claim-loop.ts`,
// `0038_audit_events.sql`, `docs/operations.md`), a section of a Markdown file
// (`docs/delivery-engine.md, "Locks"`), and a transition of the delivery
// engine (`T5`), which must also be the transition of the file that cites it.
// A rename or a renumbering that leaves a citation behind fails here.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((file) => file && existsSync(path.join(ROOT, file)));
/** CHANGELOG.md and the migrations (never edited once committed) tell history: they may name what no longer exists. */
const sources = tracked.filter(
  (file) =>
    /\.(ts|md|sql)$/.test(file) &&
    file !== 'CHANGELOG.md' &&
    !file.startsWith('migrations/') &&
    !file.startsWith('zapier/') &&
    file !== 'test/docs/references.test.ts',
);
const basenames = new Set(tracked.map((file) => path.basename(file)));

/** The text a reader reads as prose: a Markdown file whole, a TypeScript or SQL file's comments joined into lines of prose. */
function prose(file: string): string {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  if (file.endsWith('.md')) return text;
  const marker = file.endsWith('.sql') ? /^\s*--\s?(.*)$/ : /^\s*(?:\/\/|\/\*\*?|\*)\s?(.*?)(?:\*\/)?$/;
  const lines: string[] = [];
  let previous = false;
  for (const line of text.split('\n')) {
    const comment = marker.exec(line);
    if (comment && previous) lines[lines.length - 1] += ` ${comment[1]}`;
    else if (comment) lines.push(comment[1]!);
    previous = Boolean(comment);
  }
  return lines.join('\n');
}

const texts = new Map(sources.map((file) => [file, prose(file)]));

/** A file name: a word, a dot and an extension, not part of a URL, a glob or a placeholder. */
const FILE_NAME = /(?<![\w/.*<{$-])((?:[\w-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|sql|md))\b(?![\w/*-])/g;

function fileExists(citing: string, name: string): boolean {
  if (/NNNN/.test(name)) return true; // a placeholder for the next migration's number
  if (!name.includes('/')) return basenames.has(name);
  return (
    existsSync(path.join(ROOT, name)) ||
    existsSync(path.resolve(ROOT, path.dirname(citing), name)) ||
    tracked.some((file) => file.endsWith(`/${name}`))
  );
}

/** A Markdown file's path (or README), then the section's title in double quotes, after a comma or "'s". */
const SECTION = /((?:[\w.-]+\/)*[\w-]+\.md|README)(?:'s|,)? "([^"]+)"/g;

/** A Markdown file's headings, and the bold names that open its list items (docs/decisions.md's entries). */
function headings(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const titles = [...text.matchAll(/^#{1,4} (.+)$/gm), ...text.matchAll(/^\s*- \*\*(.+?)\*\*/gm)];
  return titles.map((match) => normalise(match[1]!));
}

function normalise(text: string): string {
  return text.replace(/[`*]/g, '').replace(/\s+/g, ' ').trim().toLowerCase();
}

function markdownFile(citing: string, cited: string): string | undefined {
  if (cited === 'README') return 'README.md';
  const candidates = [cited, path.join(path.dirname(citing), cited), `docs/${cited}`];
  return candidates.find((candidate) => tracked.includes(candidate));
}

const ENGINE = readFileSync(path.join(ROOT, 'docs/delivery-engine.md'), 'utf8');
const TRANSITIONS = new Map([...ENGINE.matchAll(/^\| (T\d+) \|(.*)$/gm)].map((match) => [match[1]!, match[2]!]));

/** The transition's row names the citing file, its statement, or an identifier the file holds. */
function rowNamesFile(row: string, file: string): boolean {
  const base = path.basename(file);
  const statement = base.replace(/(\.queries)?\.ts$/, '').replace(/-/g, '_');
  if (row.includes(base) || row.includes(`\`${statement}\``)) return true;
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const identifiers = [...row.matchAll(/`([A-Za-z_][\w]{3,})`/g)].map((match) => match[1]!);
  return identifiers.some((identifier) => new RegExp(`\\b${identifier}\\b`).test(text));
}

describe('what comments and documents cite exists', () => {
  test('every file name cited exists in the repository', () => {
    const missing: string[] = [];
    for (const [file, text] of texts) {
      for (const match of text.matchAll(FILE_NAME)) {
        if (!fileExists(file, match[1]!)) missing.push(`${file}: ${match[1]}`);
      }
    }
    assert.deepEqual(missing.sort(), []);
  });

  test('every section cited by name is a heading of the document cited', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const [file, text] of texts) {
      for (const match of text.matchAll(SECTION)) {
        const target = markdownFile(file, match[1]!);
        if (!target) continue; // a missing file is the test above's
        checked++;
        const wanted = normalise(match[2]!);
        if (!headings(target).some((heading) => heading === wanted || heading.startsWith(`${wanted} `) || heading.includes(wanted))) {
          missing.push(`${file}: ${match[1]}, "${match[2]}"`);
        }
      }
    }
    assert.ok(checked > 5, `section citations were found (${checked})`);
    assert.deepEqual(missing.sort(), []);
  });

  test('every transition cited (T5) exists, and a source file cites its own', () => {
    assert.ok(TRANSITIONS.size >= 12, 'docs/delivery-engine.md lists its transitions');
    const wrong: string[] = [];
    for (const [file, text] of texts) {
      for (const match of text.matchAll(/(?<![\w-])T(\d{1,2})(?![\w-])/g)) {
        const row = TRANSITIONS.get(`T${match[1]}`);
        if (!row) wrong.push(`${file}: T${match[1]} is no transition`);
        else if (file.startsWith('src/') && !rowNamesFile(row, file)) wrong.push(`${file}: T${match[1]}'s row names nothing of this file`);
      }
    }
    assert.deepEqual(wrong.sort(), []);
  });
});
