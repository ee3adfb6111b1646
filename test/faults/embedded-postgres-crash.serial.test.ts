// The embedded PostgreSQL killed under load (as the kernel's OOM killer does):
// `serve` starts it again on the same DATA_DIR by itself (crash recovery),
// answers 503 with Retry-After meanwhile and never 500, and every call it
// accepted is stored and delivered. If it cannot be started again, /healthz
// fails and the process exits 1, so that a supervisor acts.
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { baseEnv, postgresProcessesFor, startServe, tempDataDir, type Served } from '../helpers/cli.ts';
import {
  deliveredBy,
  FLEET_SECRET_KEY,
  loadCalls,
  seedTenant,
  startWorkerProcess,
  stopProcess,
  type Tenant,
  type WorkerProcess,
} from '../helpers/fleet.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { WEBHOOK_TEST_ENV } from '../helpers/webhooks.ts';

/** EMBEDDED_POSTGRES_RECOVERY_WINDOW in the test that cannot start it again. */
const RECOVERY_WINDOW_MS = 5000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function embeddedEnv(dataDir: string): NodeJS.ProcessEnv {
  return baseEnv({ ...WEBHOOK_TEST_ENV, DATA_DIR: dataDir, PORT: '0', SECRET_KEY: FLEET_SECRET_KEY, LOG_LEVEL: 'info' });
}

/** The postmaster's pid and the URL of the application database, from what the server wrote in DATA_DIR. */
async function embeddedServer(dataDir: string): Promise<{ pid: number; url: string }> {
  const [pid, , , port] = (await readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n');
  const password = (await readFile(path.join(dataDir, 'pg.password'), 'utf8')).trim();
  return { pid: Number(pid), url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/switchboard` };
}

function logLines(served: { output: () => string }): { level: number; msg: string }[] {
  return served
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });
}

describe('the embedded PostgreSQL killed', () => {
  const dirs: string[] = [];
  const running: (Served | WorkerProcess)[] = [];
  let target: HttpsTarget;

  before(async () => {
    target = await startHttpsTarget(() => ({ status: 204 }));
  });
  after(async () => {
    for (const served of running) await stopProcess(served, 'SIGKILL');
    await target?.close();
    for (const dir of dirs) {
      for (const pid of await postgresProcessesFor(dir)) process.kill(pid, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('under POST /calls load: started again by serve, 503 + Retry-After meanwhile, no 500, every accepted call stored and delivered', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    const served = await startServe(embeddedEnv(dataDir));
    running.push(served);
    const killed = await embeddedServer(dataDir);
    let tenant: Tenant | undefined;
    try {
      tenant = await seedTenant(killed.url, served.url, () => `${target.url}/hooks/crash`);
      const load = loadCalls(() => [served.url], tenant.token, 4);
      await sleep(1000);
      process.kill(killed.pid, 'SIGKILL');
      const killedAt = Date.now();
      // Ready again, by itself, within seconds (generous: the machine is loaded).
      while ((await fetch(`${served.url}/readyz`)).status !== 200 || (await postgresProcessesFor(dataDir)).length === 0) {
        assert.ok(Date.now() - killedAt < 60_000, `not ready again within 60 s:\n${served.output().slice(-3000)}`);
        await sleep(200);
      }
      const readyAfterMs = Date.now() - killedAt;
      await sleep(1000);
      await load.stop();

      assert.equal(served.child.exitCode, null, 'serve kept running');
      assert.notEqual((await embeddedServer(dataDir)).pid, killed.pid, 'a new postmaster');
      const statuses = new Map<number, number>();
      for (const answer of load.answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const summary = JSON.stringify(Object.fromEntries(statuses));
      process.stdout.write(`# ready again ${readyAfterMs} ms after the kill; answers by status: ${summary}\n`);
      assert.deepEqual(
        [...statuses.keys()].filter((status) => status !== 201 && status !== 503),
        [],
        `only 201 and 503: ${summary}`,
      );
      // The outage was seen: requests made while PostgreSQL was away were refused with 503, not held until it was back.
      assert.ok((statuses.get(503) ?? 0) >= 1, `at least one 503 during the restart: ${summary}`);
      for (const answer of load.answers.filter((a) => a.status === 503)) {
        assert.equal(answer.code, 'SERVICE_UNAVAILABLE');
        assert.match(String(answer.retryAfter), /^\d+$/);
      }
      const accepted = load.answers.flatMap((answer) => (answer.callId ? [answer.callId] : []));
      assert.ok(accepted.length > 0);

      // Stored: every call answered 201 is in the database after the crash.
      const { rows } = await tenant.pool.query<{ id: string }>('SELECT id FROM calls WHERE id = ANY($1::uuid[])', [accepted]);
      const stored = new Set(rows.map((row) => row.id));
      assert.deepEqual(
        accepted.filter((id) => !stored.has(id)),
        [],
        'every accepted call stored',
      );
      // Delivered: the in-process worker reconnected and sent each one.
      const deadline = Date.now() + 60_000;
      let missing = accepted;
      while (missing.length > 0 && Date.now() < deadline) {
        await sleep(200);
        const delivered = deliveredBy(target.requests).get('/hooks/crash') ?? new Map();
        missing = accepted.filter((id) => !delivered.has(id));
      }
      assert.deepEqual(missing, [], `${missing.length} of ${accepted.length} accepted calls never delivered`);

      // A crash the process recovered from is a warning and an info line, not an error.
      const lines = logLines(served);
      assert.ok(lines.some((line) => line.level === 40 && line.msg.includes('embedded PostgreSQL ended unexpectedly')));
      assert.ok(lines.some((line) => line.level === 30 && line.msg.includes('embedded PostgreSQL running again')));
      // Background tasks that met the outage waited quietly: at most one warning (when it began), never an error per tick.
      const waited = lines.filter((line) => line.msg === 'database unreachable: background tasks wait for it');
      assert.ok(waited.length <= 1, `one warning for the outage, not one per tick: ${waited.length}`);
      const errors = lines.filter((line) => line.level >= 50);
      assert.deepEqual(errors, [], 'no error-level line for a recovered crash');
    } finally {
      await tenant?.close();
    }
    served.child.kill('SIGTERM');
    assert.equal(await served.exited, 0, served.output().slice(-3000));
    assert.deepEqual(await postgresProcessesFor(dataDir), [], 'the clean stop stopped the restarted PostgreSQL');
  });

  test('a worker on its own brings its embedded PostgreSQL back too', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    const worker = await startWorkerProcess({ ...embeddedEnv(dataDir), WORKER_PORT: '0' });
    running.push(worker);
    const killed = await embeddedServer(dataDir);
    process.kill(killed.pid, 'SIGKILL');
    const killedAt = Date.now();
    await sleep(500);
    while ((await fetch(`${worker.url}/readyz`)).status !== 200 || (await postgresProcessesFor(dataDir)).length === 0) {
      assert.ok(Date.now() - killedAt < 60_000, `not ready again within 60 s:\n${worker.output().slice(-3000)}`);
      await sleep(200);
    }
    assert.equal(worker.child.exitCode, null, 'the worker kept running');
    assert.notEqual((await embeddedServer(dataDir)).pid, killed.pid, 'a new postmaster');
    assert.ok(logLines(worker).some((line) => line.level === 40 && line.msg.includes('embedded PostgreSQL ended unexpectedly')));
    await stopProcess(worker);
    assert.equal(await worker.exited, 0, worker.output().slice(-3000));
    assert.deepEqual(await postgresProcessesFor(dataDir), [], 'the clean stop stopped the restarted PostgreSQL');
  });

  test('when it cannot be started again: /healthz fails, then serve exits 1', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    // A short recovery window: giving up is what this test is about, not how long it takes.
    const served = await startServe({ ...embeddedEnv(dataDir), EMBEDDED_POSTGRES_RECOVERY_WINDOW: `${RECOVERY_WINDOW_MS}ms` });
    running.push(served);
    assert.equal((await fetch(`${served.url}/healthz`)).status, 200);
    // A cluster this PostgreSQL refuses to start on.
    await writeFile(path.join(dataDir, 'pg', 'PG_VERSION'), '1\n');
    process.kill((await embeddedServer(dataDir)).pid, 'SIGKILL');

    const liveness: number[] = [];
    // The window, its last backoff (5 s), /healthz failing for 3 s, then the stop: with ample room for a loaded machine.
    const deadline = Date.now() + RECOVERY_WINDOW_MS + 60_000;
    while (served.child.exitCode === null) {
      assert.ok(Date.now() < deadline, `serve still running after its recovery window and a minute; /healthz: ${liveness.join(', ')}`);
      const status = await fetch(`${served.url}/healthz`).then(
        (res) => res.status,
        () => 0,
      );
      if (liveness.at(-1) !== status) liveness.push(status);
      await sleep(200);
    }
    assert.equal(await served.exited, 1, served.output().slice(-3000));
    assert.deepEqual(liveness.slice(0, 2), [200, 503], `/healthz: ${liveness.join(', ')}`);
    assert.match(served.output(), /embedded PostgreSQL could not be started again/);
  });
});
