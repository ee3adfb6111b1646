import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openListenConnection, type ListenConnection } from '../../src/db/listen-connection.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startSilentProxy, type SilentProxy } from '../helpers/silent-proxy.ts';
import { waitFor } from '../helpers/webhooks.ts';

const CHANNEL = 'listen_connection_test';

describe('a LISTEN connection whose route goes silent', () => {
  let db: TestDatabase;
  let proxy: SilentProxy;
  const connections: ListenConnection[] = [];

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    proxy = await startSilentProxy(db.url);
  });
  after(async () => {
    await Promise.all(connections.map((connection) => connection.close()));
    await proxy.close();
    await db.drop();
  });

  const notify = (payload: string) => db.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);

  function open(heartbeatMs?: number) {
    const seen = { payloads: [] as (string | undefined)[], lost: [] as (Error | undefined)[], reconnects: 0 };
    const opening = openListenConnection(
      { connectionString: proxy.urlFor(db.url), channel: CHANNEL, ...(heartbeatMs ? { heartbeatMs } : {}) },
      {
        notification: (payload) => seen.payloads.push(payload),
        lost: (error) => seen.lost.push(error),
        connected: ({ reconnected }) => {
          if (reconnected) seen.reconnects++;
        },
      },
    );
    return opening.then((connection) => {
      connections.push(connection);
      return { connection, seen };
    });
  }

  test('without a heartbeat nothing notices: no error, no end, notifications just stop', async () => {
    const { connection, seen } = await open();
    await notify('before');
    await waitFor('the first notification', async () => seen.payloads.includes('before'));
    proxy.silence();
    // The notification reaches the route and goes no further: once the proxy has swallowed it, nothing has noticed.
    const swallowed = proxy.swallowedFromServer('after');
    await notify('after');
    await swallowed;
    assert.deepEqual(seen.payloads, ['before']);
    assert.deepEqual(seen.lost, []);
    assert.equal(connection.connected, true, 'the connection still looks up');
  });

  test('with a heartbeat the unanswered SELECT 1 ends it, and a new connection LISTENs again', async () => {
    const { connection, seen } = await open(200);
    await notify('first');
    await waitFor('the first notification', async () => seen.payloads.includes('first'));
    proxy.silence();
    await waitFor('the silent connection given up', async () => seen.lost.length > 0, 3000);
    assert.match(String(seen.lost[0]?.message), /heartbeat unanswered/);
    await waitFor('a new connection', async () => seen.reconnects === 1 && connection.connected, 3000);
    await notify('second');
    await waitFor('a notification on the new connection', async () => seen.payloads.includes('second'));
  });
});
