import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { connectRateLimitRedis } from '../../src/http/rate-limit-redis.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';
import { asUser } from '../helpers/token-client.ts';
import { freePort } from '../../src/free-port.ts';

const HAVE_REDIS = spawnSync('redis-server', ['--version']).status === 0;
const SKIP = HAVE_REDIS ? false : 'redis-server is not installed: the Redis outage test needs a Redis it can stop';

/** A Redis of the test's own (stopping the machine's would disturb other tests). */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + 10_000;
  while (!/Ready to accept connections/.test(output)) {
    if (child.exitCode !== null) throw new Error(`redis-server exited: ${output}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

// Decision (docs/decisions.md): with REDIS_URL set and Redis away, the
// rate-limited routes keep answering, without limits (fail open), and the
// outage is logged once; the limits apply again as soon as Redis is back.
describe('rate limits while Redis is away', { skip: SKIP }, () => {
  let port: number;
  let server: ChildProcess;
  let redis: Redis;
  let t: TestApp;
  const lines: { msg: string }[] = [];

  before(async () => {
    port = await freePort();
    server = await startRedis(port);
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, callback) {
          lines.push(JSON.parse(String(chunk)));
          callback();
        },
      }),
    );
    redis = await connectRateLimitRedis(`redis://127.0.0.1:${port}`, log);
    t = await startTestApp({ env: { RATE_LIMIT: '5/min' }, redis });
  });
  after(async () => {
    await t?.close();
    redis?.disconnect();
    if (server) await stopRedis(server);
  });

  test('enforced with Redis; fail open (no 429, no 5xx) while it is stopped, logged once; enforced again when it is back', async () => {
    const limited = await createMember(t.db.pool);
    for (let i = 0; i < 5; i++) assert.equal((await asUser(t.app, limited.token).get('/locations')).statusCode, 200);
    assert.equal((await asUser(t.app, limited.token).get('/locations')).statusCode, 429);

    await stopRedis(server);
    const fresh = await createMember(t.db.pool);
    for (let i = 0; i < 12; i++) {
      for (const token of [limited.token, fresh.token]) {
        const res = await asUser(t.app, token).get('/locations');
        assert.equal(res.statusCode, 200, `while Redis is away: ${res.statusCode} ${res.body}`);
      }
    }
    const away = () => lines.filter((line) => line.msg.startsWith('Redis unreachable'));
    for (let waited = 0; away().length === 0 && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 5; i++) assert.equal((await asUser(t.app, fresh.token).get('/locations')).statusCode, 200);
    assert.equal(away().length, 1, JSON.stringify(lines));

    server = await startRedis(port);
    const deadline = Date.now() + 15_000;
    while (redis.status !== 'ready') {
      assert.ok(Date.now() < deadline, `the client did not reconnect: ${redis.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(lines.filter((line) => line.msg.startsWith('Redis reachable again')).length, 1);
    const after = await createMember(t.db.pool);
    for (let i = 0; i < 5; i++) assert.equal((await asUser(t.app, after.token).get('/locations')).statusCode, 200);
    assert.equal((await asUser(t.app, after.token).get('/locations')).statusCode, 429);
  });
});
