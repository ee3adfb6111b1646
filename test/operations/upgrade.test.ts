// docs/operations.md, "Upgrading", followed from the previous tagged release to
// this checkout: the previous release (its tree from git, its dependencies
// installed by `npm ci` from its own lockfile) migrates a fresh database, and
// its `serve` and its `worker` run on it; an organization, a user, an OAuth
// client, signed subscriptions and calls are made through it (one delivery
// sent, one whose first attempt its worker is sending); this checkout's
// `migrate` runs while they run; this checkout's `serve` and `worker` then run
// beside them, both releases serving and delivering; the previous ones stop,
// one at a time; and everything made before is still there and works: tokens,
// webhook secrets, new calls, and the delivery whose first attempt failed under
// the previous release's worker, retried by this checkout's (the delivery log,
// the processes' logs and the receiver say which made each attempt, and when).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { baseEnv, BIN, cliJson, startServe, type Served } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startWorkerProcess, stopProcess, type WorkerProcess } from '../helpers/fleet.ts';
import { startHttpsTarget, type HttpsTarget, type RecordedRequest } from '../helpers/https-target.ts';
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
 * The release as docs/operations.md installs it: its tree (`git archive` of
 * the commit), then `npm ci` from its own package-lock.json, whose `prepare`
 * builds its dist/. Nothing of this checkout's node_modules is used. Kept
 * outside the repository under the release's commit and its lockfile's hash,
 * so the install costs time once per machine: CI's second pass (another
 * Node.js, same lockfile) and later runs reuse it. A directory appears under
 * its key only once complete (installed beside it, then renamed). The lockfile
 * names no registry (integrity only), so `npm ci` fetches from whichever
 * registry npm is configured for, and `--prefer-offline` takes what npm's cache
 * already holds (nearly all of it, the same versions this checkout installs).
 */
async function installRelease(ref: string): Promise<string> {
  const commit = execFileSync('git', ['rev-parse', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const lockfile = execFileSync('git', ['show', `${commit}:package-lock.json`], { cwd: ROOT });
  const lockHash = createHash('sha256').update(lockfile).digest('hex').slice(0, 12);
  const cached = path.join(os.tmpdir(), `switchboard-release-${commit}-lock-${lockHash}`);
  if (existsSync(cached)) return cached;
  const dir = await mkdtemp(`${cached}-building-`);
  try {
    await new Promise<void>((resolve, reject) => {
      const archive = spawn('git', ['archive', '--format=tar', commit], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
      const untar = spawn('tar', ['-x', '-C', dir], { stdio: ['pipe', 'inherit', 'inherit'] });
      archive.stdout.pipe(untar.stdin);
      untar.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git archive ${ref} | tar -x: ${code}`))));
    });
    // npm run by `npm test` exports this checkout as its project (npm_config_local_prefix): not passed on, nor the
    // script's own variables, so that `npm ci` works on the release's directory. Dev dependencies are its build's.
    const npmEnv = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !/^(npm_config_(local_prefix|call|yes)|npm_package_|npm_lifecycle_|npm_command$|INIT_CWD$)/i.test(name),
      ),
    );
    await new Promise<void>((resolve, reject) => {
      const npm = spawn('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline', '--include=dev'], {
        cwd: dir,
        env: npmEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      npm.stdout.on('data', (chunk) => (output += chunk));
      npm.stderr.on('data', (chunk) => (output += chunk));
      npm.on('error', reject);
      npm.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm ci in ${ref}'s checkout: ${code}\n${output}`))));
    });
    await rename(dir, cached);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    // Another run finished the same install first: use its copy.
    if (!existsSync(cached)) throw error;
  }
  return cached;
}

/**
 * Packages of the release's lockfile whose installed version differs from it
 * (or that are missing): none when its `npm ci` installed them. A release
 * borrowing this checkout's node_modules gets this checkout's versions.
 */
function differingFromLockfile(dir: string): string[] {
  assert.ok(lstatSync(path.join(dir, 'node_modules')).isDirectory(), 'node_modules is its own directory, not a link');
  const lock = JSON.parse(readFileSync(path.join(dir, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; optional?: boolean; dev?: boolean; link?: boolean }>;
  };
  const differing: string[] = [];
  for (const [location, entry] of Object.entries(lock.packages)) {
    if (!location || entry.link || !entry.version) continue;
    const manifest = path.join(dir, location, 'package.json');
    // Optional packages for other platforms are not installed.
    if (!existsSync(manifest)) {
      if (!entry.optional) differing.push(`${location} (missing)`);
      continue;
    }
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
    // npm reads a manifest's version as semver does: a leading `v` is dropped (json-metaschema says `v1.3.0`).
    if (version.replace(/^v/, '') !== entry.version) differing.push(`${location} ${version}, lockfile ${entry.version}`);
  }
  return differing;
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

/** A process's "webhook delivery attempt" log lines (LOG_LEVEL=info) for one delivery: who made which attempt. */
function attemptsLogged(output: string, deliveryId: string): { attempt: number; status?: number; outcome: string }[] {
  const lines: { attempt: number; status?: number; outcome: string }[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { msg?: string; delivery_id?: string; attempt: number; status?: number; outcome: string };
    if (entry.msg === 'webhook delivery attempt' && entry.delivery_id === deliveryId) {
      lines.push({ attempt: entry.attempt, outcome: entry.outcome, ...(entry.status === undefined ? {} : { status: entry.status }) });
    }
  }
  return lines;
}

// The first retry: the crossing delivery's retry comes this long (±10 % jitter) after its first attempt's answer.
const RETRY_MS = 5_000;

describe(`upgrading from the previous release (${PREVIOUS ? `${PREVIOUS.version}, ${PREVIOUS.ref}` : 'none found'}) as docs/operations.md says`, {
  // CI must not pass without it: there a missing release is a failure, not a skip.
  skip: PREVIOUS || process.env.CI ? false : 'no earlier release (a v* tag, or a commit CHANGELOG.md names) in this clone',
}, () => {
  let oldDir: string;
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  // `ok` answers every delivery. `flaky` holds its first request until the test lets it go, then answers it 500, and
  // answers every later one 200: the first call's delivery to it is the retry that crosses the upgrade.
  let ok: HttpsTarget;
  let flaky: HttpsTarget;
  let answerFirstAttempt: () => void;
  let oldServe: Served | undefined;
  let newServe: Served | undefined;
  let oldWorker: WorkerProcess | undefined;
  let newWorker: WorkerProcess | undefined;

  before(
    async () => {
      oldDir = await installRelease(PREVIOUS!.ref);
      db = await createTestDatabase({ migrated: false });
      env = baseEnv({
        DATABASE_URL: db.url,
        PORT: '0',
        WORKER_PORT: '0',
        SECRET_KEY: randomBytes(32).toString('base64'),
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_RETRY_SCHEDULE: `${RETRY_MS / 1000}s,1s,1s`,
        // The crossing delivery's first attempt is held open by its receiver from the first call until the previous
        // release's last process is about to stop: its time-out (and the lease, half as long again) outlasts that.
        WEBHOOK_TIMEOUT_MS: '120000',
      });
      ok = await startHttpsTarget(() => ({ status: 200 }));
      const firstAnswered = new Promise<void>((resolve) => (answerFirstAttempt = resolve));
      flaky = await startHttpsTarget(async (_request, index) => {
        if (index > 0) return { status: 200 };
        await firstAnswered;
        return { status: 500 };
      });
    },
    // The first run on a machine installs the previous release (`npm ci`, about a minute); later ones reuse it.
    { timeout: 15 * 60_000 },
  );
  after(async () => {
    answerFirstAttempt?.();
    for (const running of [oldServe, newServe, oldWorker, newWorker]) if (running) await stopProcess(running);
    await ok?.close();
    await flaky?.close();
    await db?.drop();
  });

  test('data made by the previous release survives migrate and a rolling restart of serve and worker, and both releases serve and deliver side by side meanwhile', async () => {
    try {
      const oldBin = path.join(oldDir, 'bin/switchboard.js');
      // The previous release runs on the dependencies its own lockfile names, installed by its `npm ci`.
      assert.deepEqual(differingFromLockfile(oldDir), [], `${PREVIOUS!.version} runs on its own lockfile's packages`);

      // The previous release: its migrations on a fresh database, its HTTP server and, apart, its delivery worker
      // (`serve --no-worker` and `worker`: each attempt is made by a process the test knows, and logged by it).
      const oldMigrated = await cliJson<{ applied: string[] }>(['migrate'], env, oldBin);
      assert.ok(oldMigrated.applied.length > 0);
      oldServe = await startServe(env, ['--no-worker'], oldBin);
      oldWorker = await startWorkerProcess({ ...env, LOG_LEVEL: 'info' }, oldBin);
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
      // The crossing delivery's first attempt, sent by the previous release's worker (the only one yet); held open.
      const [firstAttempt] = await flaky.waitForRequests(1, 30_000);
      const crossing = String(firstAttempt!.headers['x-delivery-id']);

      // Step 2: this checkout's migrations, while the previous release serves and its worker sends.
      const migrated = await cliJson<{ applied: string[] }>(['migrate'], env);
      assert.equal((await fetch(`${oldServe.url}/readyz`)).status, 200, 'the previous release stays ready on the migrated database');
      assert.equal((await fetch(`${oldWorker.url}/readyz`)).status, 200, "the previous release's worker stays ready too");

      // Step 3, side by side: this checkout's server and worker start beside the previous ones; both record calls and
      // both workers deliver.
      newServe = await startServe(env, ['--no-worker']);
      assert.equal((await fetch(`${newServe.url}/readyz`)).status, 200);
      const newWorkerStarted = Date.now();
      newWorker = await startWorkerProcess({ ...env, LOG_LEVEL: 'info' });
      assert.equal((await fetch(`${newWorker.url}/readyz`)).status, 200);
      const sideBySide = [
        await complete(oldBin, 'completed by the previous release beside the new one'),
        await complete(BIN, 'completed by the new release beside the previous one'),
      ];
      for (const served of [oldServe, newServe]) {
        const calls = await fetch(`${served.url}/calls`, { headers: platform.headers });
        assert.equal(calls.status, 200, `GET /calls on ${served === oldServe ? PREVIOUS!.version : 'this checkout'}`);
      }
      await waitUntil('the side-by-side calls delivered', () => sideBySide.every((id) => deliveredCallIds(ok.requests).includes(id)));

      // The previous release's server stops (SIGTERM): it drains and exits 0.
      assert.equal(await stop(oldServe), 0);

      // The crossing delivery's first attempt is answered 500 now, and recorded by the previous release's worker as
      // attempt 1, its retry due RETRY_MS later; then that worker stops (SIGTERM: it drains and exits 0) at once.
      answerFirstAttempt();
      await waitUntil('attempt 1 of the crossing delivery recorded', async () => {
        const { rows } = await db.pool.query('SELECT 1 FROM webhook_attempts WHERE delivery_id = $1', [crossing]);
        return rows.length > 0;
      });
      const oldWorkerStopping = Date.now();
      oldWorker.child.kill('SIGTERM');
      assert.equal(await oldWorker.exited, 0);

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

      // Each call reached each subscription once (the flaky one's first call twice: the 500, then its retry), signed with its secret.
      assert.deepEqual(deliveredCallIds(ok.requests).sort(), [firstCall, ...sideBySide, lastCall].sort());
      assert.deepEqual(deliveredCallIds(flaky.requests).sort(), [firstCall, firstCall, ...sideBySide, lastCall].sort());
      assert.ok(
        ok.requests.every((request) => request.headers['x-signature'] === 'ok-secret'),
        'the webhook secret decrypts after the upgrade',
      );
      assert.ok(flaky.requests.every((request) => request.headers['x-signature'] === 'flaky-secret'));
      assert.ok(migrated.applied.every((name) => /^\d{4}_[\w-]+\.sql$/.test(name)));

      // The retry crossed the upgrade. The delivery log: attempt 1 answered 500 and retried, attempt 2 answered 200.
      // The worker records an outcome, then logs it, after reading the answer: the receiver has it first.
      await waitUntil('attempt 2 of the crossing delivery recorded and logged', async () => {
        const { rows } = await db.pool.query('SELECT 1 FROM webhook_attempts WHERE delivery_id = $1 AND attempt = 2', [crossing]);
        return rows.length > 0 && attemptsLogged(newWorker!.output(), crossing).length > 0;
      });
      const { rows: logged } = await db.pool.query<{ attempt: number; status_code: number; outcome: string }>(
        'SELECT attempt, status_code, outcome FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt',
        [crossing],
      );
      assert.deepEqual(logged, [
        { attempt: 1, status_code: 500, outcome: 'retrying' },
        { attempt: 2, status_code: 200, outcome: 'succeeded' },
      ]);
      // Which process made each: the previous release's worker logged attempt 1 and nothing after; this checkout's
      // worker logged attempt 2 and nothing before.
      assert.deepEqual(attemptsLogged(oldWorker.output(), crossing), [{ attempt: 1, status: 500, outcome: 'retrying' }]);
      assert.deepEqual(attemptsLogged(newWorker.output(), crossing), [{ attempt: 2, status: 200, outcome: 'succeeded' }]);
      // Which release, as the receiver saw it: each attempt's number and User-Agent.
      const received = flaky.requests.filter((request) => request.headers['x-delivery-id'] === crossing);
      assert.deepEqual(
        received.map((request) => [request.headers['x-delivery-attempt'], request.headers['user-agent']]),
        [
          ['1', `Switchboard-Webhooks/${PREVIOUS!.version}`],
          ['2', `Switchboard-Webhooks/${VERSION}`],
        ],
      );
      // When: attempt 1 was sent before this checkout's worker started, attempt 2 after the previous release's worker
      // was told to stop, and no sooner than its retry schedule after attempt 1's answer (not a redelivery).
      const [first, second] = received as [RecordedRequest, RecordedRequest];
      assert.ok(first.receivedAt.getTime() < newWorkerStarted, 'attempt 1 was sent before the new worker ran');
      assert.ok(second.receivedAt.getTime() > oldWorkerStopping, 'attempt 2 was sent after the old worker stopped');
      const waited = second.receivedAt.getTime() - first.closedAt!.getTime();
      assert.ok(
        waited >= RETRY_MS * 0.9 - 100,
        `attempt 2 came ${waited} ms after attempt 1's answer, its retry schedule says ${RETRY_MS} ms ± 10 %`,
      );
    } catch (error) {
      // What each process printed tells why a step failed.
      const outputs = [
        `--- ${PREVIOUS?.version} serve ---\n${oldServe?.output() ?? ''}`,
        `--- ${PREVIOUS?.version} worker ---\n${oldWorker?.output() ?? ''}`,
        `--- this checkout's serve ---\n${newServe?.output() ?? ''}`,
        `--- this checkout's worker ---\n${newWorker?.output() ?? ''}`,
      ].join('\n');
      throw new Error(`${(error as Error).message}\n${outputs}`, { cause: error });
    }
  });
});
