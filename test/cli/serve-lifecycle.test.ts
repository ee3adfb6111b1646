// The embedded default, end to end: `switchboard serve` with no DATABASE_URL.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, describe, test } from 'node:test';
import { baseEnv, cliJson, postgresProcessesFor, startServe, tempDataDir } from '../helpers/cli.ts';

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
    process.kill(-first.child.pid!, 'SIGKILL');
    await first.exited;
    for (let i = 0; i < 50 && (await postgresProcessesFor(dataDir)).length > 0; i++) await new Promise((r) => setTimeout(r, 100));

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
  });
});
