// One key scheme for every advisory lock (db/advisory-locks.ts, the schema's
// app_lock_class): each taker holds (its lock's class, the hash of its id), as
// pg_locks shows it, and no two locks share a class.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MIGRATIONS_LOCK } from '../../src/db/advisory-locks.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPool, type PoolClient } from '../../src/db/pool.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { withOrg } from '../../src/db/with-org.ts';
import { lockPrimary } from '../../src/locations/locations.queries.ts';
import { lockClientShared } from '../../src/oauth/clients.queries.ts';
import { waitClaimLock, tryClaimLock } from '../../src/webhooks/claim-lock.ts';
import { lockActiveSubscriptions } from '../../src/webhooks/subscription-limit.queries.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

interface Held {
  classid: number;
  objid: number;
  objsubid: number;
  mode: string;
}

/** The advisory locks this transaction holds (pg_locks shows each int4 key as an oid: its 32 bits unsigned). */
async function held(tx: PoolClient): Promise<Held[]> {
  const { rows } = await tx.query<Held>(
    `SELECT classid::int8 AS classid, objid::int8 AS objid, objsubid::int AS objsubid, mode
       FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() ORDER BY 1, 2`,
  );
  return rows.map((row) => ({ ...row, classid: Number(row.classid), objid: Number(row.objid) }));
}

describe('advisory locks', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  const scalar = async (sql: string, values: unknown[] = []): Promise<number> =>
    Number(Object.values((await db.pool.query(sql, values)).rows[0] as object)[0]);
  const classOf = (lock: string) => scalar('SELECT app_lock_class($1) AS c', [lock]);

  test('every lock has a class of its own; the migrations take theirs before the schema exists', async () => {
    const locks = ['migrations', 'claim', 'client', 'active_subscriptions', 'primary_location'];
    const classes = await Promise.all(locks.map(classOf));
    assert.equal(new Set(classes).size, locks.length, `classes: ${classes.join(', ')}`);
    assert.equal(MIGRATIONS_LOCK[0], await classOf('migrations'), 'migrate.ts writes the class app_lock_class gives');
    await assert.rejects(classOf('claims'), /no advisory lock is named claims/);
  });

  test("each taker holds (its lock's class, its id's hash); the claim lock keeps 0.1.0's key", async () => {
    const subscription = randomUUID();
    const organization = randomUUID();
    const client = `client-${randomUUID()}`;
    const expect = async (lock: string, id: string, type: 'uuid' | 'text', mode = 'ExclusiveLock') => ({
      classid: await classOf(lock),
      objid: await scalar(`SELECT ${type === 'uuid' ? 'uuid_hash($1::uuid)' : 'hashtext($1)'}::int8 & 4294967295 AS h`, [id]),
      objsubid: 2,
      mode,
    });

    await withTransaction(db.pool, async (tx) => {
      await tx.query(`SELECT ${tryClaimLock('$1::uuid')}`, [subscription]);
      assert.deepEqual(await held(tx), [await expect('claim', subscription, 'uuid')]);
    });
    assert.equal(await classOf('claim'), 0x5357_4843, "0.1.0's class: old and new workers exclude each other");
    await withTransaction(db.pool, async (tx) => {
      await tx.query(`SELECT ${waitClaimLock('$1::uuid')}`, [subscription]);
      assert.deepEqual(await held(tx), [await expect('claim', subscription, 'uuid')]);
    });
    await withTransaction(db.pool, async (tx) => {
      await lockClientShared(tx, client);
      assert.deepEqual(await held(tx), [await expect('client', client, 'text', 'ShareLock')]);
    });
    await withTransaction(db.pool, async (tx) => {
      await tx.query('SELECT app_lock_client($1)', [client]);
      assert.deepEqual(await held(tx), [await expect('client', client, 'text')]);
    });
    await withOrg(db.pool, organization, async (tx) => {
      await lockActiveSubscriptions(tx);
      assert.deepEqual(await held(tx), [await expect('active_subscriptions', organization, 'uuid')]);
    });
    await withOrg(db.pool, organization, async (tx) => {
      await lockPrimary(tx);
      assert.deepEqual(await held(tx), [await expect('primary_location', organization, 'uuid')]);
    });
  });

  test('a migration waits for a process holding the migrations lock', async () => {
    const holder = await db.pool.connect();
    const other = createPool(db.url, 1);
    try {
      await holder.query('SELECT pg_advisory_lock($1, $2)', [...MIGRATIONS_LOCK]);
      let done = false;
      const migrating = migrate(other).then((result) => {
        done = true;
        return result;
      });
      const waiting = async () =>
        (
          await db.pool.query(
            "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid::int8 = $1 AND objid = 0 AND objsubid = 2",
            [await classOf('migrations')],
          )
        ).rows.length === 1;
      while (!done && !(await waiting())) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(done, false, 'the migration waits for the holder');
      await holder.query('SELECT pg_advisory_unlock($1, $2)', [...MIGRATIONS_LOCK]);
      assert.deepEqual((await migrating).applied, [], 'then finds nothing left to apply');
    } finally {
      holder.release();
      await other.end();
    }
  });
});
