// db/schema.sql is the schema the migrations make, and the committed
// migrations never change (migrations/SHA256SUMS), on whichever PostgreSQL
// the suite runs against: the embedded 17 or the machine's 15.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MIGRATIONS_DIR, migrate } from '../../src/db/migrate.ts';
import { renderLiveSchema, SCHEMA_FILE } from '../../scripts/live-schema.ts';
import { checkManifest, hashMigrations, MANIFEST_NAME, readManifest, unrecordedMessage } from '../../scripts/migration-manifest.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const ROOT = path.resolve(MIGRATIONS_DIR, '..');

describe('db/schema.sql', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ migrated: false });
    await migrate(db.pool);
  });
  after(() => db.drop());

  test('is what the migrations make', async () => {
    const committed = await readFile(path.join(ROOT, SCHEMA_FILE), 'utf8');
    const live = await renderLiveSchema(db.pool);
    assert.ok(
      live === committed,
      `${SCHEMA_FILE} differs from the schema the migrations make: run \`npm run schema\` and commit it.\n` +
        firstDifference(committed, live),
    );
  });

  test('shows a change the migrations did not make', async () => {
    const before = await renderLiveSchema(db.pool);
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('CREATE INDEX schema_test_idx ON calls (summary)');
      await client.query('ALTER TABLE calls ALTER COLUMN summary SET DEFAULT $$none$$');
      const after = await renderLiveSchema(client);
      assert.notEqual(after, before);
      assert.match(after, /CREATE INDEX schema_test_idx ON calls USING btree \(summary\);/);
      assert.match(after, /\n {2}summary text DEFAULT 'none'::text,?\n/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});

function firstDifference(committed: string, live: string): string {
  const a = committed.split('\n');
  const b = live.split('\n');
  const at = a.findIndex((line, index) => line !== b[index]);
  const line = at === -1 ? a.length : at;
  return `first difference at line ${line + 1}:\n  committed: ${a[line] ?? '(end of file)'}\n  live:      ${b[line] ?? '(end of file)'}`;
}

describe('migrations are append-only (migrations/SHA256SUMS)', () => {
  test('every committed migration is recorded, unchanged', async () => {
    const { broken, unrecorded } = checkManifest(await readManifest(MIGRATIONS_DIR), await hashMigrations(MIGRATIONS_DIR));
    assert.deepEqual(broken, []);
    assert.deepEqual(unrecorded, [], unrecordedMessage(unrecorded));
  });

  describe('a copy of migrations/ that breaks the rule', () => {
    let dir: string;
    let names: string[];
    before(async () => {
      names = [...(await readManifest(MIGRATIONS_DIR)).keys()].sort();
      assert.ok(names.length > 2);
    });
    const fresh = async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
      dir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-migrations-'));
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
    };
    const check = async () => checkManifest(await readManifest(dir), await hashMigrations(dir));
    after(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

    test('an edited migration', async () => {
      await fresh();
      const name = names[1]!;
      await writeFile(path.join(dir, name), `${await readFile(path.join(dir, name), 'utf8')}\n-- one more line\n`);
      const { broken } = await check();
      assert.equal(broken.length, 1);
      assert.match(broken[0]!, new RegExp(`^migrations/${name} changed after it was committed .* put the change in a new migration\\.$`));
    });

    test('a removed migration', async () => {
      await fresh();
      await rm(path.join(dir, names[0]!));
      const { broken } = await check();
      assert.equal(broken.length, 1);
      assert.match(broken[0]!, new RegExp(`^migrations/${names[0]} is in migrations/${MANIFEST_NAME} but gone`));
    });

    test('a renamed migration', async () => {
      await fresh();
      const old = names.at(-1)!;
      const renamed = old.replace(/^(\d+)_/, (_, n: string) => `${String(Number(n) + 1).padStart(n.length, '0')}_`);
      await rename(path.join(dir, old), path.join(dir, renamed));
      const { broken, unrecorded } = await check();
      assert.equal(broken.length, 1);
      assert.match(broken[0]!, new RegExp(`^migrations/${old} is in migrations/${MANIFEST_NAME} but gone`));
      assert.deepEqual(unrecorded, [renamed]);
    });

    test('a new migration without its entry, and one numbered before the last', async () => {
      await fresh();
      await writeFile(path.join(dir, '9999_next.sql'), 'SELECT 1;\n');
      await writeFile(path.join(dir, '0000_early.sql'), 'SELECT 1;\n');
      const { broken, unrecorded } = await check();
      assert.deepEqual(unrecorded, ['9999_next.sql']);
      assert.match(unrecordedMessage(unrecorded), /^migrations\/9999_next\.sql not in migrations\/SHA256SUMS: run `npm run schema`/);
      assert.equal(broken.length, 1);
      assert.match(broken[0]!, /^migrations\/0000_early\.sql is new but sorts before .* Give it the next number\.$/);
    });
  });
});
