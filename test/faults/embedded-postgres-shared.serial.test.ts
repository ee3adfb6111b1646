// `switchboard serve --no-worker` and `switchboard worker` on one DATA_DIR, the
// embedded PostgreSQL they share killed (SIGKILL of the postmaster, as the OOM
// killer does): docs/operations.md, "The embedded PostgreSQL" and "Outages".
// One of the two starts it again on the same data (never two postmasters on
// the directory at once), the other reconnects to it; the API answers 503 with
// Retry-After meanwhile and 201 after; a call acknowledged before the crash is
// delivered after it; each process logs the outage once as a warning and its
// end once, never an error; the cluster stops cleanly and starts again.
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { baseEnv, postgresProcessesFor, runCli, startServe, tempDataDir, type Served } from '../helpers/cli.ts';
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function sharedEnv(dataDir: string): NodeJS.ProcessEnv {
  return baseEnv({
    ...WEBHOOK_TEST_ENV,
    // Retries every second for long enough to outlast the outage: the calls made before it wait for it.
    WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 40 }, () => '1s').join(','),
    DATA_DIR: dataDir,
    PORT: '0',
    WORKER_PORT: '0',
    SECRET_KEY: FLEET_SECRET_KEY,
    LOG_LEVEL: 'info',
    // Short, so that a restart that never comes fails the test quickly rather than at its time-out.
    EMBEDDED_POSTGRES_RECOVERY_WINDOW: '20s',
  });
}

/** The postmaster's pid and the URL of the application database, from what the server wrote in DATA_DIR. */
async function embeddedServer(dataDir: string): Promise<{ pid: number; url: string }> {
  const [pid, , , port] = (await readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n');
  const password = (await readFile(path.join(dataDir, 'pg.password'), 'utf8')).trim();
  return { pid: Number(pid), url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/switchboard` };
}

/** Field 4 of /proc/<pid>/stat: the process that started `pid`. */
async function parentOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function logLines(process_: { output: () => string }): { level: number; msg: string }[] {
  return process_
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });
}

/** Watches the postmasters on DATA_DIR every 50 ms: the most running at once (and what they were, past one). */
function watchPostmasters(dataDir: string) {
  let most = 0;
  const overlap: string[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const found = await postgresProcessesFor(dataDir);
      // A postmaster's child (a backend) keeps its command line for a moment after the fork: a postmaster is one
      // whose parent is not one (and a process gone before its parent was read is such a child, ended at once).
      const parents = await Promise.all(found.map((pid) => parentOf(pid).catch(() => undefined)));
      const pids = found.filter((_, i) => parents[i] !== undefined && !found.includes(parents[i]));
      if (pids.length > most) {
        most = pids.length;
        if (most > 1) {
          const described = await Promise.all(
            pids.map(
              async (pid) =>
                `${pid} (parent ${await parentOf(pid).catch(() => '?')}): ${(await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ')}`,
            ),
          );
          overlap.push(described.join('; '));
        }
      }
      await sleep(50);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { most, overlap };
    },
  };
}

async function readyz(url: string): Promise<number> {
  return fetch(`${url}/readyz`).then(
    (res) => res.status,
    () => 0,
  );
}

describe('serve and worker sharing one DATA_DIR when the embedded PostgreSQL dies', () => {
  let dataDir: string | undefined;
  const running: (Served | WorkerProcess)[] = [];
  let target: HttpsTarget;
  /** Set at the kill: the receiver refuses (503) before, so the calls made before the crash wait for after it. */
  let healthy = false;

  before(async () => {
    target = await startHttpsTarget(() => ({ status: healthy ? 204 : 503 }));
  });
  after(async () => {
    for (const process_ of running) await stopProcess(process_, 'SIGKILL');
    await target?.close();
    if (dataDir) {
      for (const pid of await postgresProcessesFor(dataDir)) process.kill(pid, 'SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test('one of them starts it again, the other reconnects; 503 then 201; a call acknowledged before is delivered after; one warning, no error', async () => {
    dataDir = await tempDataDir();
    const env = sharedEnv(dataDir);
    const served = await startServe(env, ['--no-worker']);
    running.push(served);
    const worker = await startWorkerProcess(env);
    running.push(worker);
    const killed = await embeddedServer(dataDir);
    assert.equal(await parentOf(killed.pid), served.child.pid, 'serve, first, started it; the worker attached');
    assert.deepEqual(await postgresProcessesFor(dataDir), [killed.pid]);

    let tenant: Tenant | undefined;
    let postmasters: ReturnType<typeof watchPostmasters> | undefined;
    let load: ReturnType<typeof loadCalls> | undefined;
    try {
      tenant = await seedTenant(killed.url, served.url, () => `${target.url}/hooks/shared`);
      // Acknowledged before the crash, each attempted (and refused) by the worker: pending when PostgreSQL dies.
      const beforeCrash: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res: Response = await fetch(`${served.url}/calls`, {
          method: 'POST',
          headers: { 'x-user-token': tenant.token, 'content-type': 'application/json' },
          body: JSON.stringify({ summary: `Before the crash ${i}`, duration_seconds: 30 }),
        });
        assert.equal(res.status, 201);
        beforeCrash.push(((await res.json()) as { id: string }).id);
      }
      const attempted = () => new Set(target.requests.map((request) => (JSON.parse(request.body) as { id: string }).id));
      while (!beforeCrash.every((id) => attempted().has(id))) await sleep(50);

      postmasters = watchPostmasters(dataDir);
      load = loadCalls(() => [served.url], tenant.token, 2);
      await sleep(500);
      healthy = true;
      process.kill(killed.pid, 'SIGKILL');
      const killedAt = Date.now();
      while (
        (await readyz(served.url)) !== 200 ||
        (await readyz(worker.url)) !== 200 ||
        (await postgresProcessesFor(dataDir)).length === 0
      ) {
        assert.ok(
          Date.now() - killedAt < 30_000,
          `not ready again within 30 s:\n${served.output().slice(-2000)}\n${worker.output().slice(-2000)}`,
        );
        await sleep(100);
      }
      const readyAfterMs = Date.now() - killedAt;
      const restarted = await embeddedServer(dataDir);
      await sleep(1000);
      await load.stop();
      // The API answers again once PostgreSQL is back.
      const afterwards = await fetch(`${served.url}/calls`, {
        method: 'POST',
        headers: { 'x-user-token': tenant.token, 'content-type': 'application/json' },
        body: JSON.stringify({ summary: 'After the crash', duration_seconds: 30 }),
      });
      assert.equal(afterwards.status, 201);
      const afterId = ((await afterwards.json()) as { id: string }).id;
      const watched = await postmasters.stop();

      assert.equal(served.child.exitCode, null, 'serve kept running');
      assert.equal(worker.child.exitCode, null, 'the worker kept running');
      // Exactly one of them started it again, on the same data, and it is the one running since.
      assert.notEqual(restarted.pid, killed.pid, 'a new postmaster');
      const starter = await parentOf(restarted.pid);
      const starterName = starter === served.child.pid ? 'serve' : starter === worker.child.pid ? 'worker' : `pid ${starter}`;
      assert.ok(starterName === 'serve' || starterName === 'worker', `started again by serve or the worker, not ${starterName}`);
      assert.equal(watched.most, 1, `never two postmasters on the directory at once: ${watched.overlap.join(' | ')}`);
      assert.deepEqual(await postgresProcessesFor(dataDir), [restarted.pid], 'the one started again is the one running');
      assert.equal((await embeddedServer(dataDir)).pid, restarted.pid, 'and it stayed');

      const statuses = new Map<number, number>();
      for (const answer of load.answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const summary = JSON.stringify(Object.fromEntries(statuses));
      process.stdout.write(`# restarted by ${starterName}; both ready ${readyAfterMs} ms after the kill; answers: ${summary}\n`);
      assert.deepEqual(
        [...statuses.keys()].filter((status) => status !== 201 && status !== 503),
        [],
        `only 201 and 503: ${summary}`,
      );
      assert.ok((statuses.get(503) ?? 0) >= 1, `at least one 503 during the outage: ${summary}`);
      for (const answer of load.answers.filter((a) => a.status === 503)) {
        assert.equal(answer.code, 'SERVICE_UNAVAILABLE');
        assert.match(String(answer.retryAfter), /^\d+$/);
      }

      // Delivered after the crash: the calls acknowledged before it, those accepted during the load, and the one after.
      const accepted = [...beforeCrash, ...load.answers.flatMap((answer) => (answer.callId ? [answer.callId] : [])), afterId];
      const { rows } = await tenant.pool.query<{ id: string }>('SELECT id FROM calls WHERE id = ANY($1::uuid[])', [accepted]);
      assert.equal(rows.length, accepted.length, 'every acknowledged call stored');
      const deadline = Date.now() + 30_000;
      const deliveredAfterCrash = () =>
        deliveredBy(target.requests.filter((request) => request.receivedAt.getTime() >= killedAt)).get('/hooks/shared') ?? new Map();
      let missing = accepted;
      while (missing.length > 0 && Date.now() < deadline) {
        await sleep(200);
        const delivered = deliveredAfterCrash();
        missing = accepted.filter((id) => !delivered.has(id));
      }
      assert.deepEqual(missing, [], `${missing.length} of ${accepted.length} acknowledged calls not delivered after the crash`);

      // Each process: the outage is one warning when it begins and one line when it ends, never an error (per tick or at all).
      for (const [name, process_] of [
        ['serve', served],
        ['worker', worker],
      ] as const) {
        const lines = logLines(process_);
        const count = (msg: string) => lines.filter((line) => line.msg.startsWith(msg)).length;
        const lost = count('embedded PostgreSQL ended unexpectedly');
        assert.ok(lost <= 1, `${name}: ${lost} lines for one crash`);
        assert.equal(count('embedded PostgreSQL running again'), lost, `${name}: its end said once`);
        const waited = count('database unreachable: background tasks wait for it');
        assert.ok(waited <= 1, `${name}: one warning for the outage, not one per tick: ${waited}`);
        assert.equal(count('database reachable again: background tasks resume'), waited, `${name}: its end said once`);
        assert.deepEqual(
          lines.filter((line) => line.level >= 50),
          [],
          `${name}: no error-level line for a recovered crash`,
        );
      }
      const starterLines = logLines(starter === served.child.pid ? served : worker);
      assert.ok(starterLines.some((line) => line.level === 40 && line.msg.startsWith('embedded PostgreSQL ended unexpectedly')));
      assert.ok(starterLines.some((line) => line.level === 30 && line.msg.startsWith('embedded PostgreSQL running again')));
    } finally {
      // Stopped here too when an assertion failed: left running, they would keep the test process alive.
      await load?.stop();
      await postmasters?.stop();
      await tenant?.close();
    }

    // Both stop cleanly; the last one stops the PostgreSQL started again, and the cluster starts again cleanly.
    await stopProcess(worker);
    assert.equal(await worker.exited, 0, worker.output().slice(-3000));
    await stopProcess(served);
    assert.equal(await served.exited, 0, served.output().slice(-3000));
    assert.deepEqual(await postgresProcessesFor(dataDir), [], 'the last clean stop stopped it');
    const migrate = await runCli(['migrate'], env, 60_000);
    assert.equal(migrate.code, 0, `the cluster starts again on the same data: ${migrate.stdout}${migrate.stderr}`);
    assert.deepEqual(await postgresProcessesFor(dataDir), []);
  });
});
