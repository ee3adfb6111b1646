// Process lifecycle for `switchboard serve` and `switchboard worker`: check
// HOST, open the database (embedded, or DATABASE_URL waited for), migrate,
// start HTTP and/or background workers, and on SIGINT/SIGTERM stop them in
// reverse order: HTTP first (drain requests), then workers, then the pool,
// then the embedded PostgreSQL.
import { pino, type Logger } from 'pino';
import type { Redis } from 'ioredis';
import { buildApp, buildKeyed, buildWorkerApp } from './app.ts';
import { workerTasks } from './background.ts';
import type { Config } from './config/config.ts';
import { checkListenHost } from './config/listen-host.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { createPool, type Pool } from './db/pool.ts';
import { reachDatabase, type DatabaseWait } from './db/reach-database.ts';
import { openRequestPool } from './db/request-pool.ts';
import { createMetrics } from './metrics/metrics.ts';
import { connectRateLimitRedis } from './http/rate-limit-redis.ts';
import { openLogStream } from './http/log-format.ts';
import { traceLogFields } from './http/logger.ts';
import { startTracing, stopTracing } from './tracing/start-tracing.ts';
import { loadTracingConfig } from './tracing/tracing-config.ts';
import { createProcessCaches, type ProcessCaches } from './cache/process-caches.ts';
import { listenForInvalidations, type CacheListener } from './cache/cache-listener.ts';
import { waitingProbes } from './probes/waiting-server.ts';
import type { Supervision } from './db/embedded-postgres.ts';
import type { Liveness } from './probes/liveness-server.ts';
import { startAll, stopAll, type Task } from './tasks/task.ts';

export interface RunOptions {
  http: boolean;
  workers: boolean;
}

export interface Running {
  url?: string;
  stop(): Promise<void>;
  /** Settles when the process has given up (its embedded PostgreSQL could not be brought back). */
  gaveUp: Promise<Error>;
}

/**
 * The part of SHUTDOWN_TIMEOUT the delivery worker may spend letting running
 * attempts finish: the rest is for draining HTTP first and for handing back,
 * closing the pool and exiting after.
 */
export function workerDrainMs(shutdownTimeoutMs: number): number {
  return Math.max(500, Math.round(shutdownTimeoutMs * 0.6) - 1000);
}

/** How long /healthz answers 503 before a process that gave up stops. */
const LIVENESS_FAILING_MS = 3000;

/** `signal` ends a wait for the database at once (a SIGTERM during it): run() then throws its reason. */
export async function run(config: Config, options: RunOptions, signal?: AbortSignal): Promise<Running> {
  // Before anything logs or queries: spans and log fields start with the process (src/tracing).
  await startTracing(loadTracingConfig());
  const logStream = await openLogStream(config.logFormat);
  const logOptions = { level: config.logLevel, ...traceLogFields() };
  const log: Logger = logStream ? pino(logOptions, logStream) : pino(logOptions);
  let database: Database | undefined;
  // Owner connection: migrations, the delivery worker, housekeeping. Request
  // work runs on appPool as switchboard_request (src/db/request-pool.ts).
  let ownerPool: Pool | undefined;
  let appPool: Pool | undefined;
  let redis: Redis | undefined;
  let caches: ProcessCaches | undefined;
  let cacheListener: CacheListener | undefined;
  const tasks: Task[] = [];
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  // Once an external database is found away at start, the port answers probes
  // (/readyz 503) until the application takes it over.
  const probes = waitingProbes(config.host, options.http ? config.port : config.workerPort);
  const wait: DatabaseWait = { log, onWaiting: () => probes.start(), ...(signal ? { signal } : {}) };
  const liveness: Liveness = {};
  let giveUp: (error: Error) => void = () => {};
  const gaveUp = new Promise<Error>((resolve) => (giveUp = resolve));
  // A crash of the embedded PostgreSQL (the OOM killer) is an outage this
  // process ends by itself: warn, restart, info. Only giving up is an error.
  const supervision: Supervision = {
    lost: (pid) =>
      log.warn({ component: 'postgres', pid, data_dir: config.dataDir }, 'embedded PostgreSQL ended unexpectedly; starting it again'),
    recovered: (outageMs) => log.info({ component: 'postgres', outage_ms: outageMs }, 'embedded PostgreSQL running again'),
    failed: (error) => {
      // /healthz fails for a probe interval before the exit, so a probing orchestrator sees why.
      liveness.failure = `embedded PostgreSQL could not be started again: ${error.message.split('\n')[0]}`;
      log.error({ component: 'postgres', err: error }, 'embedded PostgreSQL could not be started again; exiting');
      setTimeout(() => giveUp(error), LIVENESS_FAILING_MS);
    },
  };

  const stop = async () => {
    await probes.stop();
    await app?.close();
    await cacheListener?.close();
    await stopAll(tasks);
    await appPool?.end();
    await ownerPool?.end();
    redis?.disconnect();
    await database?.stop();
    // Last: the spans of the stop itself are exported too.
    await stopTracing();
  };

  try {
    await checkListenHost(config.host);
    database = await openDatabase(config, {
      log: (line) => log.debug({ component: 'postgres' }, line),
      wait,
      supervision,
      // A server gone again before the migrations ran is waited for like one that never answered.
      prepare: async (url) => {
        ownerPool ??= createPool(url, 20);
        const { applied } = await migrate(ownerPool);
        if (applied.length) log.info({ applied }, 'migrations applied');
      },
    });
    const pool = ownerPool!;
    if (config.webhookAllowPrivateTargets) {
      log.warn(
        'WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhook deliveries may reach loopback and private networks (on any port unless WEBHOOK_ALLOWED_PORTS is set); never use this in production',
      );
    }
    const metrics = createMetrics({ processMetrics: true });
    const keyed = await buildKeyed(config);
    if (options.workers) {
      // Running attempts get most of the shutdown time to finish; the rest are handed back.
      const drainMs = workerDrainMs(config.shutdownTimeoutMs);
      tasks.push(
        ...workerTasks({
          pool,
          config,
          log,
          metrics,
          keys: keyed.keys,
          secretBox: keyed.webhookSecrets,
          databaseUrl: database.url,
          drainMs,
        }),
      );
      await startAll(tasks);
    }
    if (!options.http) {
      // A standalone worker still answers probes and scrapes (WORKER_PORT).
      app = await buildWorkerApp({ config, pool, metrics, liveness, ...(logStream ? { logStream } : {}) });
      await probes.stop();
      const url = await app.listen({ port: probes.port, host: config.host });
      return { url, stop, gaveUp };
    }

    if (config.redisUrl) redis = await connectRateLimitRedis(config.redisUrl, log);
    if (config.databaseAppUrl) await reachDatabase('DATABASE_APP_URL', config.databaseAppUrl, wait);
    appPool = await openRequestPool({ ownerPool: pool, ownerUrl: database.url, appUrl: config.databaseAppUrl, max: 20 });
    if (config.cacheMaxAgeSeconds > 0) {
      // Credential and read caches, on only while their LISTEN connection is (src/cache).
      caches = createProcessCaches({ maxAgeMs: config.cacheMaxAgeSeconds * 1000 });
      cacheListener = await listenForInvalidations(database.url, caches, log);
    }
    app = await buildApp({
      config,
      pool: appPool,
      ownerPool: pool,
      metrics,
      keyed,
      liveness,
      ...(logStream ? { logStream } : {}),
      ...(redis ? { redis } : {}),
      ...(caches ? { caches } : {}),
    });
    await probes.stop();
    const url = await app.listen({ port: probes.port, host: config.host });
    return { url, stop, gaveUp };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

/**
 * Runs until SIGINT or SIGTERM, then stops cleanly and exits 0. A signal while
 * starting (waiting for DATABASE_URL's server, say) ends the start at once.
 */
export async function runUntilSignalled(config: Config, options: RunOptions): Promise<void> {
  const starting = new AbortController();
  let running: Running | undefined;
  let stopping = false;
  const exit = (code: number) =>
    (running ? running.stop() : Promise.resolve()).then(
      () => process.exit(code),
      (error) => {
        process.stderr.write(`shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  const shutdown = (reason: NodeJS.Signals | Error) => {
    if (stopping) return;
    stopping = true;
    const exitCode = reason instanceof Error ? 1 : 0;
    if (reason instanceof Error) process.stderr.write(`switchboard: giving up: ${reason.message.split('\n')[0]}\n`);
    else process.stdout.write(`${reason} received, shutting down\n`);
    const force = setTimeout(() => {
      process.stderr.write(`shutdown did not finish within SHUTDOWN_TIMEOUT (${config.shutdownTimeoutMs} ms); exiting\n`);
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    // Still starting: run() stops what it started and returns or throws; the start's end exits.
    if (!running) starting.abort(new Error(`${reason} received while starting`));
    else void exit(exitCode);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  try {
    running = await run(config, options, starting.signal);
  } catch (error) {
    if (stopping) return void exit(0);
    throw error;
  }
  if (stopping) return void exit(0);
  if (options.http) process.stdout.write(`Switchboard listening on ${running.url} (BASE_URL ${config.baseUrl})\n`);
  else process.stdout.write(`Switchboard worker running; health and metrics on ${running.url}\n`);
  void running.gaveUp.then(shutdown);
}
