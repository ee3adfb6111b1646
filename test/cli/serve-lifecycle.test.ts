// The embedded default, end to end: `switchboard serve` with no DATABASE_URL.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, describe, test } from 'node:test';
import { baseEnv, cliJson, postgresProcessesFor, runCli, startServe, tempDataDir } from '../helpers/cli.ts';
import { startWorkerProcess, stopProcess } from '../helpers/fleet.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('serve on the embedded PostgreSQL', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) {
      for (const pid of await postgresProcessesFor(dir)) process.kill(pid, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('SIGTERM stops the server and its PostgreSQL cleanly, and the CLI shares the running database', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    const env = baseEnv({ DATA_DIR: dataDir, PORT: '0' });
    const served = await startServe(env);
    assert.equal((await fetch(`${served.url}/readyz`)).status, 200);
    assert.equal((await postgresProcessesFor(dataDir)).length > 0, true);

    // The CLI attaches to the server's embedded PostgreSQL: what it creates, the server sees.
    const org = await cliJson<{ id: string; name: string }>(['org', 'create', '--name', 'Shared'], env);
    await cliJson(['user', 'create', '--email', 'shared@example.com', '--password', 'password123', '--org', org.id], env);
    const login = await fetch(`${served.url}/auth/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'shared@example.com', password: 'password123' }),
    });
    assert.equal(login.status, 201);
    const { token } = await cliJson<{ token: string }>(['user-token', 'create', '--email', 'shared@example.com'], env);
    assert.equal((await fetch(`${served.url}/auth/session`, { headers: { 'x-user-token': token } })).status, 200);
    assert.ok((await postgresProcessesFor(dataDir)).length > 0, 'the CLI did not stop the server’s database');

    served.child.kill('SIGTERM');
    assert.equal(await served.exited, 0);
    assert.deepEqual(await postgresProcessesFor(dataDir), [], 'no orphan PostgreSQL');
  });

  test('after kill -9 of the whole process group, the next start recovers', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    const env = baseEnv({ DATA_DIR: dataDir, PORT: '0' });
    const first = await startServe(env);
    const org = await cliJson<{ id: string }>(['org', 'create', '--name', 'Survivor'], env);
    // The database runs in a process group of its own: it outlives this kill, and the next start adopts it.
    process.kill(-first.child.pid!, 'SIGKILL');
    await first.exited;

    const second = await startServe(env);
    try {
      assert.equal((await fetch(`${second.url}/readyz`)).status, 200);
      const { organizations } = await cliJson<{ organizations: { id: string }[] }>(['org', 'list'], env);
      assert.ok(
        organizations.some((o) => o.id === org.id),
        'data written before the kill survived',
      );
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    assert.deepEqual(await postgresProcessesFor(dataDir), [], 'the clean stop stopped the adopted PostgreSQL');
  });

  test('kill -9 of serve alone leaves its PostgreSQL running; the next start adopts it, and the last clean stop stops it', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    const env = baseEnv({ DATA_DIR: dataDir, PORT: '0' });
    // Two kills in a row: each start takes over what the killed one left.
    for (let kill = 0; kill < 2; kill++) {
      const served = await startServe(env);
      assert.equal((await fetch(`${served.url}/readyz`)).status, 200);
      served.child.kill('SIGKILL');
      await served.exited;
      assert.equal((await postgresProcessesFor(dataDir)).length, 1, 'kill -9 of serve alone leaves its PostgreSQL running');
    }
    const last = await startServe(env);
    assert.equal((await fetch(`${last.url}/readyz`)).status, 200);
    last.child.kill('SIGTERM');
    assert.equal(await last.exited, 0, last.output());
    assert.deepEqual(await postgresProcessesFor(dataDir), [], 'the clean stop stopped the adopted PostgreSQL');
  });

  test('serve and worker share one DATA_DIR: the first to stop leaves the database to the other, the last stops it', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    const env = baseEnv({ DATA_DIR: dataDir, PORT: '0', WORKER_PORT: '0' });
    const served = await startServe(env, ['--no-worker']);
    const worker = await startWorkerProcess(env);
    served.child.kill('SIGTERM');
    assert.equal(await served.exited, 0, served.output());
    assert.equal((await postgresProcessesFor(dataDir)).length, 1, 'the database was not stopped under the worker');
    // Give a stopped database time to show on the worker's /readyz.
    await sleep(1000);
    assert.equal((await fetch(`${worker.url}/readyz`)).status, 200, worker.output());
    await stopProcess(worker);
    assert.equal(await worker.exited, 0, worker.output());
    assert.deepEqual(await postgresProcessesFor(dataDir), [], 'the last clean stop stopped it');
  });

  test('`switchboard db stop` stops what a kill -9 left, and refuses while serve uses it', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    const env = baseEnv({ DATA_DIR: dataDir, PORT: '0' });
    const served = await startServe(env);
    const refused = await runCli(['db', 'stop'], env);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, new RegExp(`in use by process ${served.child.pid}`));
    assert.equal((await fetch(`${served.url}/readyz`)).status, 200, 'serve still has its database');

    served.child.kill('SIGKILL');
    await served.exited;
    const left = await postgresProcessesFor(dataDir);
    assert.equal(left.length, 1);
    assert.deepEqual(await cliJson(['db', 'stop'], env), { stopped: true, pid: left[0] });
    assert.deepEqual(await postgresProcessesFor(dataDir), []);
    const again = await runCli(['db', 'stop'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, `no embedded PostgreSQL is running in ${dataDir}\n`);
    assert.match((await runCli(['--help'], env)).stdout, /^ {2}db stop +Stop the embedded PostgreSQL/m);
  });
});
