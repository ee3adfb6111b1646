// docs/operations.md, "Upgrading", followed from the previous tagged release to
// this checkout: the previous release (its tree from git, built against this
// checkout's node_modules) migrates a fresh database and serves it; an
// organization, a user, an OAuth client, signed subscriptions and calls are
// made through it (one delivery sent, one waiting for its retry); this
// checkout's `migrate` runs while it serves; both releases then serve and
// deliver side by side; the previous one stops; and everything made before is
// still there and works: tokens, webhook secrets, the waiting delivery, new calls.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rename, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { baseEnv, BIN, cliJson, startServe, type Served } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { completeCallByCli, connectOverHttp, deliveredCallIds, subscribeOverHttp, tokenGrant } from '../helpers/http-platform.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The previous release: the newest release tag reachable from HEAD that is not
 * this version's own (once this version is tagged, the one before it), or, in a
 * clone without tags, the commit CHANGELOG.md names for the newest release
 * before this version ("## 0.1.0" … "commit `2eb7333`"). Undefined outside a
 * git clone.
 */
function previousRelease(): { ref: string; version: string } | undefined {
  try {
    const tags = execFileSync('git', ['tag', '--merged', 'HEAD', '--list', 'v*', '--sort=-v:refname'], { cwd: ROOT, encoding: 'utf8' });
    const tag = tags.split('\n').find((name) => /^v\d+\.\d+\.\d+$/.test(name) && name !== `v${VERSION}`);
    if (tag) return { ref: tag, version: tag.slice(1) };
    const changelog = readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
    for (const section of changelog.split(/^## /m).slice(1)) {
      const version = /^(\d+\.\d+\.\d+)/.exec(section)?.[1];
      const commit = /commit `([0-9a-f]{7,40})`/.exec(section)?.[1];
      if (version && version !== VERSION && commit) {
        execFileSync('git', ['merge-base', '--is-ancestor', commit, 'HEAD'], { cwd: ROOT, stdio: 'ignore' });
        return { ref: commit, version };
      }
    }
    return undefined;
  } catch {
    return undefined;
  }
}

const PREVIOUS = previousRelease();

/**
 * The release's tree, as `git archive` gives it, with this checkout's
 * node_modules, compiled into its dist/. Built once and kept outside the
 * repository, keyed by the release's commit and this checkout's path (its
 * node_modules), so that CI's second pass and later runs reuse it instead of
 * compiling the release again: a directory appears under its key only once
 * complete (built beside it, then renamed).
 */
async function extractRelease(ref: string): Promise<string> {
  const commit = execFileSync('git', ['rev-parse', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const checkout = createHash('sha256').update(ROOT).digest('hex').slice(0, 12);
  const cached = path.join(os.tmpdir(), `switchboard-release-${commit}-${checkout}`);
  if (existsSync(cached)) return cached;
  const dir = await mkdtemp(`${cached}-building-`);
  await new Promise<void>((resolve, reject) => {
    const archive = spawn('git', ['archive', '--format=tar', commit], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const untar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'inherit', 'inherit'] });
    archive.stdout.pipe(untar.stdin);
    untar.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git archive ${ref} | tar -x: ${code}`))));
  });
  // Its dependencies must be among this checkout's: it runs on them.
  const { dependencies } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const name of Object.keys(dependencies)) {
    assert.ok(existsSync(path.join(ROOT, 'node_modules', name)), `${ref} depends on ${name}, which this checkout does not install`);
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: dir });
  try {
    await rename(dir, cached);
  } catch (error) {
    // Another run finished the same build first: use its copy.
    await rm(dir, { recursive: true, force: true });
    if (!existsSync(cached)) throw error;
  }
  return cached;
}

async function stop(served: Served): Promise<number | null> {
  served.child.kill('SIGTERM');
  return served.exited;
}

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe(`upgrading from the previous release (${PREVIOUS ? `${PREVIOUS.version}, ${PREVIOUS.ref}` : 'none found'}) as docs/operations.md says`, {
  // CI must not pass without it: there a missing release is a failure, not a skip.
  skip: PREVIOUS || process.env.CI ? false : 'no earlier release (a v* tag, or a commit CHANGELOG.md names) in this clone',
}, () => {
  let oldDir: string;
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  // `ok` answers every delivery; `flaky` answers its first one 503, so that delivery waits for its retry.
  let ok: HttpsTarget;
  let flaky: HttpsTarget;
  let oldServe: Served | undefined;
  let newServe: Served | undefined;

  before(async () => {
    oldDir = await extractRelease(PREVIOUS!.ref);
    db = await createTestDatabase({ migrated: false });
    env = baseEnv({
      DATABASE_URL: db.url,
      PORT: '0',
      SECRET_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // The delivery that failed waits through the upgrade for its retry (whichever worker's turn it is sends it).
      WEBHOOK_RETRY_SCHEDULE: '15s,1s,1s',
    });
    ok = await startHttpsTarget(() => ({ status: 200 }));
    flaky = await startHttpsTarget((_request, index) => (index === 0 ? { status: 503 } : { status: 200 }));
  });
  after(async () => {
    for (const served of [oldServe, newServe]) if (served && served.child.exitCode === null) await stop(served);
    await ok?.close();
    await flaky?.close();
    await db?.drop();
  });

  test('data made by the previous release survives migrate and a rolling restart, and both releases serve side by side meanwhile', async () => {
    try {
      const oldBin = path.join(oldDir, 'bin/switchboard.js');

      // The previous release: its migrations on a fresh database, its server with a delivery worker.
      const oldMigrated = await cliJson<{ applied: string[] }>(['migrate'], env, oldBin);
      assert.ok(oldMigrated.applied.length > 0);
      oldServe = await startServe(env, [], oldBin);
      const openapi = (await (await fetch(`${oldServe.url}/openapi.json`)).json()) as { info: { version: string } };
      assert.equal(openapi.info.version, PREVIOUS!.version, 'the previous release serves');

      // Made through the previous release: an organization, its owner, an OAuth client connected over HTTP,
      // two signed subscriptions and a call.
      const platform = await connectOverHttp(oldServe.url, env, oldBin);
      await subscribeOverHttp(oldServe.url, platform, `${ok.url}/hook`, 'ok-secret');
      await subscribeOverHttp(oldServe.url, platform, `${flaky.url}/hook`, 'flaky-secret');
      const complete = (bin: string, summary: string) => completeCallByCli(platform, summary, env, bin);
      const firstCall = await complete(oldBin, 'completed before the upgrade');
      await ok.waitForRequests(1, 30_000);
      await flaky.waitForRequests(1, 30_000); // answered 503: its retry is due in 15 s, during or after the upgrade

      // Step 2: this checkout's migrations, while the previous release serves.
      const migrated = await cliJson<{ applied: string[] }>(['migrate'], env);
      assert.equal((await fetch(`${oldServe.url}/readyz`)).status, 200, 'the previous release stays ready on the migrated database');

      // Step 3, side by side: this checkout's server starts beside the previous one; both record calls and deliver.
      newServe = await startServe(env);
      assert.equal((await fetch(`${newServe.url}/readyz`)).status, 200);
      const sideBySide = [
        await complete(oldBin, 'completed by the previous release beside the new one'),
        await complete(BIN, 'completed by the new release beside the previous one'),
      ];
      for (const served of [oldServe, newServe]) {
        const calls = await fetch(`${served.url}/calls`, { headers: platform.headers });
        assert.equal(calls.status, 200, `GET /calls on ${served === oldServe ? PREVIOUS!.version : 'this checkout'}`);
      }
      await waitUntil('the side-by-side calls delivered', () => sideBySide.every((id) => deliveredCallIds(ok.requests).includes(id)));

      // The previous release stops (SIGTERM): it drains and exits 0.
      assert.equal(await stop(oldServe), 0);

      // Everything made before is still there and works with this checkout alone.
      const listed = await fetch(`${newServe.url}/calls`, { headers: platform.headers });
      assert.equal(listed.status, 200, 'an access token issued by the previous release');
      assert.ok(JSON.stringify(await listed.json()).includes(firstCall));
      // A refresh token issued by the previous release (asserted 200).
      await tokenGrant(newServe.url, platform.client, { grant_type: 'refresh_token', refresh_token: platform.tokens.refresh_token });
      const lastCall = await complete(BIN, 'completed after the upgrade');
      // The delivery that waited for its retry through the upgrade has gone out, and the new call too.
      await waitUntil(
        'the waiting delivery and the new call delivered',
        () =>
          deliveredCallIds(flaky.requests).filter((id) => id === firstCall).length === 2 &&
          [ok, flaky].every((target) => deliveredCallIds(target.requests).includes(lastCall)),
        60_000,
      );

      // Each call reached each subscription once (the flaky one's first call twice: the 503, then its retry), signed with its secret.
      assert.deepEqual(deliveredCallIds(ok.requests).sort(), [firstCall, ...sideBySide, lastCall].sort());
      assert.deepEqual(deliveredCallIds(flaky.requests).sort(), [firstCall, firstCall, ...sideBySide, lastCall].sort());
      assert.ok(
        ok.requests.every((request) => request.headers['x-signature'] === 'ok-secret'),
        'the webhook secret decrypts after the upgrade',
      );
      assert.ok(flaky.requests.every((request) => request.headers['x-signature'] === 'flaky-secret'));
      assert.ok(migrated.applied.every((name) => /^\d{4}_[\w-]+\.sql$/.test(name)));
    } catch (error) {
      // What each server printed tells why a step failed.
      const outputs = `--- ${PREVIOUS?.version} ---\n${oldServe?.output() ?? ''}\n--- this checkout ---\n${newServe?.output() ?? ''}`;
      throw new Error(`${(error as Error).message}\n${outputs}`, { cause: error });
    }
  });
});
