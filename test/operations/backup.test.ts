// docs/operations.md, "Backing up": a backup restored brings back everything,
// and the key with it (a signed subscription still delivers, a token still
// works). The copy of DATA_DIR runs the document's own two blocks; the dump
// runs pg_dump and pg_restore as written, where the machine's pg_dump is as
// new as the test's PostgreSQL (pg_dump refuses a newer server).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { baseEnv, cliJson, postgresProcessesFor, runCli, startServe, tempDataDir, type Served } from '../helpers/cli.ts';
import { adminQuery, createTestDatabase, databaseUrl, type TestDatabase } from '../helpers/db.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { completeCallByCli, connectOverHttp, deliveredCallIds, subscribeOverHttp, type HttpPlatform } from '../helpers/http-platform.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The sh block of docs/operations.md that contains `text`, as written. */
function documentBlock(text: string): string {
  const document = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
  const blocks = [...document.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const found = blocks.filter((block) => block.includes(text));
  assert.equal(found.length, 1, `one sh block of docs/operations.md contains ${text}`);
  return found[0]!;
}

/** The major version of the machine's pg_dump, or undefined without one. */
function pgDumpMajor(): number | undefined {
  try {
    const version = execFileSync('pg_dump', ['--version'], { encoding: 'utf8' });
    // "pg_dump (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)"
    const major = /\(PostgreSQL\)\s+(\d+)/.exec(version)?.[1];
    return major === undefined ? undefined : Number(major);
  } catch {
    return undefined;
  }
}

async function stop(served: Served): Promise<void> {
  served.child.kill('SIGTERM');
  assert.equal(await served.exited, 0);
}

/** What must come back: the organization, a token issued before, and a signed delivery of a new call. */
async function assertRestored(
  served: Served,
  platform: HttpPlatform,
  env: NodeJS.ProcessEnv,
  target: HttpsTarget,
  /** Requests the target is to have received once the new call is delivered. */
  delivered: number,
): Promise<void> {
  const organizations = await cliJson<{ organizations: { id: string }[] }>(['org', 'list'], env);
  assert.ok(organizations.organizations.some((organization) => organization.id === platform.organizationId));
  assert.equal((await fetch(`${served.url}/calls`, { headers: platform.headers })).status, 200, 'the access token issued before');
  const call = await completeCallByCli(platform, 'completed after the restore', env);
  const requests = await target.waitForRequests(delivered, 30_000);
  assert.equal(deliveredCallIds(requests).at(-1), call);
  assert.equal(requests.at(-1)!.headers['x-signature'], 'restored-secret', 'the webhook secret opens under the restored key');
}

describe('backing up and restoring as docs/operations.md says', () => {
  let target: HttpsTarget;
  before(async () => {
    target = await startHttpsTarget(() => ({ status: 200 }));
  });
  after(() => target.close());

  test('the embedded database: the copy of DATA_DIR, restored, brings back the data and the generated key', async () => {
    const work = await tempDataDir();
    const dataDir = path.join(work, '.data');
    await mkdir(dataDir, { mode: 0o755 });
    // No DATABASE_URL and no SECRET_KEY: the embedded PostgreSQL and a generated DATA_DIR/secret.key.
    const env = baseEnv({ DATA_DIR: dataDir, PORT: '0', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    const seen = target.requests.length;
    try {
      let served = await startServe(env);
      const platform = await connectOverHttp(served.url, env);
      await subscribeOverHttp(served.url, platform, `${target.url}/embedded`, 'restored-secret');
      await completeCallByCli(platform, 'completed before the backup', env);
      await target.waitForRequests(seen + 1, 30_000);
      // `switchboard db url` names the running embedded server (for pg_dump), password included.
      const { url } = await cliJson<{ url: string }>(['db', 'url'], env);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query('SELECT id FROM organizations');
      await client.end();
      assert.deepEqual(
        rows.map((row: { id: string }) => row.id),
        [platform.organizationId],
      );
      await stop(served);
      assert.deepEqual(await postgresProcessesFor(dataDir), [], 'the embedded PostgreSQL stopped with the service');
      const none = await runCli(['db', 'url'], env);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /no embedded PostgreSQL is running in .*: it runs while a serve or worker uses that DATA_DIR/);
      assert.ok(existsSync(path.join(dataDir, 'secret.key')));

      // The archive holds secret.key and pg.password: it is written outside the checkout
      // (the blocks run in it), in the home directory, and git ignores one left in a checkout.
      const home = path.join(work, 'home');
      await mkdir(home);
      const shell = { cwd: work, env: { ...process.env, HOME: home } };
      execFileSync('bash', ['-euc', documentBlock('tar -czf')], shell);
      assert.deepEqual(
        readdirSync(work).filter((name) => name.endsWith('.tar.gz')),
        [],
        'nothing written into the directory that holds .data',
      );
      assert.ok(
        readdirSync(home).some((name) => name.endsWith('.tar.gz')),
        'the archive is in the home directory',
      );
      execFileSync('git', ['check-ignore', '--no-index', '-q', 'switchboard-backup.tar.gz'], { cwd: ROOT });
      execFileSync('bash', ['-euc', documentBlock('tar -xzf')], shell);
      // Nothing may come from the old directory: only the archive.
      await rm(path.join(work, '.data.old'), { recursive: true, force: true });

      served = await startServe(env);
      try {
        await assertRestored(served, platform, env, target, seen + 2);
      } finally {
        await stop(served);
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  test('a database behind DATABASE_URL: pg_dump while the service runs, pg_restore into a new database', async (t) => {
    const major = pgDumpMajor();
    const db: TestDatabase = await createTestDatabase();
    const serverMajor = Math.floor(Number((await adminQuery('SHOW server_version_num')).rows[0].server_version_num) / 10000);
    if (major === undefined || major < serverMajor) {
      await db.drop();
      t.skip(`pg_dump ${major ?? 'is not installed and'} cannot dump PostgreSQL ${serverMajor}`);
      return;
    }
    const restoredName = `${db.name}_restored`;
    const dump = path.join(await tempDataDir(), 'switchboard.dump');
    const env = baseEnv({
      DATABASE_URL: db.url,
      PORT: '0',
      SECRET_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    const seen = target.requests.length;
    try {
      let served = await startServe(env);
      let platform: HttpPlatform;
      try {
        platform = await connectOverHttp(served.url, env);
        await subscribeOverHttp(served.url, platform, `${target.url}/dumped`, 'restored-secret');
        await completeCallByCli(platform, 'completed before the dump', env);
        await target.waitForRequests(seen + 1, 30_000);
        // While the service runs, with the URL `switchboard db url` prints.
        const { url } = await cliJson<{ url: string }>(['db', 'url'], env);
        assert.equal(url, db.url);
        execFileSync('pg_dump', ['--format=custom', `--file=${dump}`, url]);
      } finally {
        await stop(served);
      }

      await adminQuery(`CREATE DATABASE ${restoredName}`);
      execFileSync('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${databaseUrl(restoredName)}`, dump]);
      const restoredEnv = { ...env, DATABASE_URL: databaseUrl(restoredName) };
      served = await startServe(restoredEnv);
      try {
        await assertRestored(served, platform, restoredEnv, target, seen + 2);
      } finally {
        await stop(served);
      }
    } finally {
      await adminQuery(`DROP DATABASE IF EXISTS ${restoredName} WITH (FORCE)`);
      await db.drop();
      await rm(path.dirname(dump), { recursive: true, force: true });
    }
  });
});
