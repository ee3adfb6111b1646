// migrations/SHA256SUMS: the SHA-256 of every committed migration, in the
// format `sha256sum` writes (so `cd migrations && sha256sum -c SHA256SUMS`
// checks it too). Migrations are append-only (migrations/README.md): a
// database records each by file name and never applies it again, so an edited,
// renamed or removed file, or a new one numbered before the last, would leave
// databases that differ from a fresh one. test/db/schema.test.ts runs
// manifestProblems on every test run; `npm run schema` appends new files.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { listMigrations } from '../src/db/migrate.ts';

export const MANIFEST_NAME = 'SHA256SUMS';

export type Manifest = Map<string, string>;

export function parseManifest(text: string): Manifest {
  const manifest: Manifest = new Map();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const match = /^([0-9a-f]{64}) [ *](.+)$/.exec(line);
    if (!match) throw new Error(`migrations/${MANIFEST_NAME}: not a "<sha256>  <file>" line: ${line}`);
    manifest.set(match[2]!, match[1]!);
  }
  return manifest;
}

export function renderManifest(manifest: Manifest): string {
  return [...manifest.keys()]
    .sort()
    .map((name) => `${manifest.get(name)}  ${name}\n`)
    .join('');
}

export async function readManifest(dir: string): Promise<Manifest> {
  return parseManifest(await readFile(path.join(dir, MANIFEST_NAME), 'utf8').catch(() => ''));
}

/** Every migration file in `dir` with the SHA-256 of its bytes. */
export async function hashMigrations(dir: string): Promise<Manifest> {
  const hashes: Manifest = new Map();
  for (const name of await listMigrations(dir)) {
    hashes.set(
      name,
      createHash('sha256')
        .update(await readFile(path.join(dir, name)))
        .digest('hex'),
    );
  }
  return hashes;
}

export interface ManifestCheck {
  /** Why the migrations break the append-only rule: nothing `npm run schema` may fix. */
  broken: string[];
  /** New migrations, after every recorded one, not yet in the manifest. */
  unrecorded: string[];
}

export function checkManifest(recorded: Manifest, actual: Manifest): ManifestCheck {
  const broken: string[] = [];
  for (const [name, hash] of recorded) {
    const now = actual.get(name);
    if (now === undefined) {
      broken.push(
        `migrations/${name} is in migrations/${MANIFEST_NAME} but gone: a committed migration is never removed or renamed ` +
          '(a database that applied it records its file name). Restore it; make any change in a new migration.',
      );
    } else if (now !== hash) {
      broken.push(
        `migrations/${name} changed after it was committed (its SHA-256 is not the one in migrations/${MANIFEST_NAME}). ` +
          `Migrations are append-only: restore it (git checkout -- migrations/${name}) and put the change in a new migration.`,
      );
    }
  }
  const last = [...recorded.keys()].sort().at(-1) ?? '';
  const unrecorded: string[] = [];
  for (const name of actual.keys()) {
    if (recorded.has(name)) continue;
    if (name < last) {
      broken.push(
        `migrations/${name} is new but sorts before ${last}, the last committed migration: a database that already ` +
          `applied ${last} would apply it out of order. Give it the next number.`,
      );
    } else {
      unrecorded.push(name);
    }
  }
  return { broken, unrecorded };
}

export function unrecordedMessage(unrecorded: string[]): string {
  return `${unrecorded.map((name) => `migrations/${name}`).join(', ')} not in migrations/${MANIFEST_NAME}: run \`npm run schema\` to record it and refresh db/schema.sql, then commit both with the migration.`;
}
