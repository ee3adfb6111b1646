// What a start with a bad or unreachable setting says, through the real
// executable: every failure names its variable and what to do, within seconds;
// HOST and DATA_DIR are checked before any database work; a DATABASE_URL whose
// server does not answer yet makes `serve` wait (probes answer meanwhile) and
// `migrate` exit 1 (also when the server is gone again between the first
// connection and the migrations); a SIGTERM during the wait exits 0 at once; a
// server that refuses the login or has no such database is a configuration
// error (exit 78).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { baseEnv, BIN, postgresProcessesFor, runCli, tempDataDir } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { stopProcess } from '../helpers/fleet.ts';
import { startSilentProxy, type SilentProxy } from '../helpers/silent-proxy.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SECRET_KEY = randomBytes(32).toString('base64');

/** A port nothing listens on (taken from the kernel, then let go). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function withUrl(url: string, change: (parsed: URL) => void): string {
  const parsed = new URL(url);
  change(parsed);
  return parsed.toString();
}

/** The JSON log lines of `output` about `variable`. */
function linesAbout(output: string, variable: string): { msg: string; variable: string }[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string; variable: string })
    .filter((line) => line.variable === variable);
}

/**
 * A proxy on `port` of 127.0.0.1 that passes one connection to `databaseUrl`'s
 * server (the reachability check) and then stops listening: the server is gone
 * by the next connection (the migrations').
 */
async function goneAfterOneConnection(databaseUrl: string, port: number): Promise<{ passed: Promise<void> }> {
  const target = new URL(databaseUrl);
  let passed = () => {};
  const server = net.createServer((client) => {
    server.close();
    passed();
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { passed: new Promise<void>((resolve) => (passed = resolve)) };
}

/** `serve` or `worker` with its output collected. */
function spawnServer(command: 'serve' | 'worker', env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BIN, command], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const result = { child, output: '' };
  child.stdout.on('data', (chunk) => (result.output += chunk));
  child.stderr.on('data', (chunk) => (result.output += chunk));
  return result;
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `${what} within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

describe('startup errors name their variable', () => {
  let db: TestDatabase;
  const dirs: string[] = [];
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    for (const dir of dirs) {
      for (const pid of await postgresProcessesFor(dir)) process.kill(pid, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
    await db?.drop();
  });

  test('serve waits for a DATABASE_URL that does not answer: /healthz 200, /readyz 503, one log line, ready once it answers', async () => {
    const dbPort = await closedPort();
    const httpPort = await closedPort();
    // A password in the URL, to see that no line shows it (trust authentication ignores it).
    const password = new URL(db.url).password || 'not-for-logs-7d1f';
    const url = withUrl(db.url, (u) => {
      u.port = String(dbPort);
      u.password = password;
    });
    const env = baseEnv({ DATABASE_URL: url, SECRET_KEY, PORT: String(httpPort), LOG_LEVEL: 'info' });
    const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    let proxy: SilentProxy | undefined;
    try {
      await waitFor('a line naming DATABASE_URL', () => linesAbout(output, 'DATABASE_URL').length > 0 || child.exitCode !== null);
      assert.equal(child.exitCode, null, `serve exited:\n${output}`);
      const [line] = linesAbout(output, 'DATABASE_URL');
      assert.match(line!.msg, /^DATABASE_URL: /);
      assert.ok(line!.msg.includes(`${new URL(db.url).hostname}:${dbPort}`), line!.msg);
      const base = `http://127.0.0.1:${httpPort}`;
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      const readyz = await fetch(`${base}/readyz`);
      assert.equal(readyz.status, 503);
      assert.ok(readyz.headers.get('retry-after'));
      assert.equal(((await readyz.json()) as { code: string }).code, 'NOT_READY');

      // Several retries pass in five seconds; none of them logs again (at most one line per 30 s).
      await sleep(5000);
      assert.equal(linesAbout(output, 'DATABASE_URL').filter((l) => /no PostgreSQL answers/.test(l.msg)).length, 1, output);
      assert.equal(child.exitCode, null, output);

      // The server appears at that address: the same process becomes ready by itself.
      proxy = await startSilentProxy(db.url, dbPort);
      await waitFor('/readyz 200', async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200);
      assert.match(output, /Switchboard listening on http:\/\/127\.0\.0\.1:\d+/);
      assert.ok(!output.includes(password), 'the password is never logged');
    } finally {
      await stopProcess({ child });
      await proxy?.close();
    }
  });

  test('worker waits the same way, answering its probes on WORKER_PORT', async () => {
    const dbPort = await closedPort();
    const workerPort = await closedPort();
    const url = withUrl(db.url, (u) => (u.port = String(dbPort)));
    const env = baseEnv({ DATABASE_URL: url, SECRET_KEY, WORKER_PORT: String(workerPort) });
    const child = spawn(process.execPath, [BIN, 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      await waitFor('a line naming DATABASE_URL', () => linesAbout(output, 'DATABASE_URL').length > 0 || child.exitCode !== null);
      assert.equal(child.exitCode, null, `worker exited:\n${output}`);
      assert.equal((await fetch(`http://127.0.0.1:${workerPort}/healthz`)).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${workerPort}/readyz`)).status, 503);
    } finally {
      await stopProcess({ child });
    }
  });

  test('migrate exits 1 with a line naming DATABASE_URL and the address when no server answers', async () => {
    const dbPort = await closedPort();
    const url = withUrl(db.url, (u) => (u.port = String(dbPort)));
    const result = await runCli(['migrate'], baseEnv({ DATABASE_URL: url, SECRET_KEY }), 60_000);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /^switchboard: DATABASE_URL: no PostgreSQL answers at /);
    assert.ok(result.stderr.includes(`${new URL(db.url).hostname}:${dbPort}`), result.stderr);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  });

  test('SIGTERM while serve or worker waits for DATABASE_URL ends it at once with exit 0', async () => {
    for (const command of ['serve', 'worker'] as const) {
      const dbPort = await closedPort();
      const url = withUrl(db.url, (u) => (u.port = String(dbPort)));
      const env = baseEnv({ DATABASE_URL: url, SECRET_KEY, PORT: String(await closedPort()), WORKER_PORT: String(await closedPort()) });
      const server = spawnServer(command, env);
      try {
        await waitFor(
          'a line naming DATABASE_URL',
          () => linesAbout(server.output, 'DATABASE_URL').length > 0 || server.child.exitCode !== null,
        );
        assert.equal(server.child.exitCode, null, `${command} exited:\n${server.output}`);
        const exited = once(server.child, 'exit');
        const signalled = Date.now();
        server.child.kill('SIGTERM');
        const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
        const tookMs = Date.now() - signalled;
        assert.deepEqual({ code, signal }, { code: 0, signal: null }, `${command}:\n${server.output}`);
        // Well within SHUTDOWN_TIMEOUT (30 s), whose end would exit 1.
        assert.ok(tookMs < 10_000, `${command} took ${tookMs} ms to exit`);
        assert.match(server.output, /SIGTERM received, shutting down/);
      } finally {
        await stopProcess({ child: server.child }, 'SIGKILL');
      }
    }
  });

  test('a server gone between the first connection and the migrations: migrate exits 1 naming DATABASE_URL, serve waits for it', async () => {
    const dbPort = await closedPort();
    const url = withUrl(db.url, (u) => (u.port = String(dbPort)));
    const address = `${new URL(db.url).hostname}:${dbPort}`;
    const gone = await goneAfterOneConnection(db.url, dbPort);
    const result = await runCli(['migrate'], baseEnv({ DATABASE_URL: url, SECRET_KEY }), 60_000);
    await gone.passed;
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /^switchboard: DATABASE_URL: no PostgreSQL answers at /);
    assert.ok(result.stderr.includes(address), result.stderr);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);

    const again = await goneAfterOneConnection(db.url, dbPort);
    const httpPort = await closedPort();
    const server = spawnServer('serve', baseEnv({ DATABASE_URL: url, SECRET_KEY, PORT: String(httpPort), LOG_LEVEL: 'info' }));
    let proxy: SilentProxy | undefined;
    try {
      await again.passed;
      await waitFor(
        'a line naming DATABASE_URL',
        () => linesAbout(server.output, 'DATABASE_URL').length > 0 || server.child.exitCode !== null,
      );
      assert.equal(server.child.exitCode, null, `serve exited:\n${server.output}`);
      const [line] = linesAbout(server.output, 'DATABASE_URL');
      assert.match(line!.msg, /^DATABASE_URL: no PostgreSQL answers at /);
      assert.ok(line!.msg.includes(address), line!.msg);
      const base = `http://127.0.0.1:${httpPort}`;
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      assert.equal((await fetch(`${base}/readyz`)).status, 503);
      // The server is back: the same process migrates and becomes ready.
      proxy = await startSilentProxy(db.url, dbPort);
      await waitFor('/readyz 200', async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200);
      assert.match(server.output, /Switchboard listening on http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      await stopProcess({ child: server.child });
      await proxy?.close();
    }
  });

  test('a role the server does not know, or a database it does not have, exits 78 naming DATABASE_URL', async () => {
    const unknownRole = withUrl(db.url, (u) => (u.username = 'sb_no_such_role'));
    const missingDatabase = withUrl(db.url, (u) => (u.pathname = '/sb_no_such_database'));
    for (const [args, url] of [
      [['migrate'], unknownRole],
      [['serve'], unknownRole],
      [['migrate'], missingDatabase],
      [['serve'], missingDatabase],
    ] as const) {
      const result = await runCli([...args], baseEnv({ DATABASE_URL: url, SECRET_KEY, PORT: '0' }), 60_000);
      assert.equal(result.code, 78, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, /^switchboard: DATABASE_URL: PostgreSQL at \S+:\d+\/\S+ (refused the login|has no such database)/);
    }
  });

  test('a DATABASE_APP_URL the server refuses stops serve with 78 naming DATABASE_APP_URL', async () => {
    const appUrl = withUrl(db.url, (u) => (u.username = 'sb_no_such_role'));
    const result = await runCli(['serve'], baseEnv({ DATABASE_URL: db.url, DATABASE_APP_URL: appUrl, SECRET_KEY, PORT: '0' }), 60_000);
    assert.equal(result.code, 78, result.stderr);
    assert.match(result.stderr, /^switchboard: DATABASE_APP_URL: PostgreSQL at .* refused the login/);
  });

  test('an unusable HOST exits 78 naming HOST before any database work', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    const result = await runCli(['serve'], baseEnv({ HOST: '999.1.1.1', DATA_DIR: dataDir, PORT: '0' }), 60_000);
    assert.equal(result.code, 78, result.stderr);
    assert.match(result.stderr, /^switchboard: HOST: cannot listen on "999\.1\.1\.1"/);
    assert.equal(existsSync(`${dataDir}/pg`), false, 'no embedded PostgreSQL was set up');
    assert.deepEqual(await postgresProcessesFor(dataDir), []);
  });

  test('a PORT another process holds exits 78 naming PORT and a possible second server, before PostgreSQL starts', async () => {
    const dataDir = await tempDataDir();
    dirs.push(dataDir);
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const result = await runCli(['serve'], baseEnv({ DATA_DIR: dataDir, PORT: String(port) }), 60_000);
      assert.equal(result.code, 78, result.stderr);
      assert.equal(
        result.stderr,
        `switchboard: PORT: port ${port} on 127.0.0.1 is taken by another process: another Switchboard server may be running (a second npm start?); stop it, or set PORT to a free port\n`,
      );
      assert.equal(existsSync(`${dataDir}/pg`), false, 'no embedded PostgreSQL was set up');
      assert.deepEqual(await postgresProcessesFor(dataDir), []);
      const worker = await runCli(['worker'], baseEnv({ DATA_DIR: dataDir, WORKER_PORT: String(port) }), 60_000);
      assert.equal(worker.code, 78, worker.stderr);
      assert.match(worker.stderr, /^switchboard: WORKER_PORT: port \d+ on 127\.0\.0\.1 is taken by another process/);
      assert.equal(existsSync(`${dataDir}/pg`), false);
    } finally {
      holder.close();
    }
  });

  test('a DATA_DIR that cannot be made exits 78 naming DATA_DIR within seconds', async () => {
    for (const command of ['serve', 'migrate']) {
      const result = await runCli([command], baseEnv({ DATA_DIR: '/proc/nope', PORT: '0' }), 30_000);
      assert.equal(result.code, 78, `${command}: ${result.code === null ? 'still running after 30 s' : result.stderr}`);
      assert.match(result.stderr, /^switchboard: DATA_DIR: cannot create \/proc\/nope/);
    }
  });
});
