// The resources `serve` and `worker` take (src/server.ts), each with how it
// is given back: the log, the owner's database (embedded, or DATABASE_URL
// waited for, migrated), and the application on its port with what it needs
// (Redis, the request pool, the caches and their LISTEN connection).
import { pino, type Logger } from 'pino';
import { buildApp, buildWorkerApp, type Keyed } from './app.ts';
import type { Config } from './config/config.ts';
import { openDatabase, type Database } from './db/database.ts';
import type { Supervision } from './db/embedded-supervision.ts';
import { migrate } from './db/migrate.ts';
import { createPool, type Pool } from './db/pool.ts';
import { reachDatabase, type DatabaseWait } from './db/reach-database.ts';
import { openRequestPool } from './db/request-pool.ts';
import { openLogStream } from './http/log-format.ts';
import { traceLogFields } from './http/logger.ts';
import { connectRateLimitRedis } from './http/rate-limit-redis.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { Liveness } from './probes/liveness-server.ts';
import { createProcessCaches } from './cache/process-caches.ts';
import { listenForInvalidations } from './cache/cache-listener.ts';
import type { Resources } from './tasks/resources.ts';

/** How long /healthz answers 503 before a process that gave up stops. */
const LIVENESS_FAILING_MS = 3000;

export interface ProcessLog {
  log: Logger;
  logStream?: NodeJS.WritableStream;
}

export async function openLog(config: Config): Promise<ProcessLog> {
  const logStream = await openLogStream(config.logFormat);
  const logOptions = { level: config.logLevel, ...traceLogFields() };
  return logStream ? { log: pino(logOptions, logStream), logStream } : { log: pino(logOptions) };
}

/**
 * A crash of the embedded PostgreSQL (the OOM killer) is an outage this
 * process ends by itself: warn, restart, info. Only giving up is an error:
 * /healthz fails for a probe interval before `giveUp`, so a probing
 * orchestrator sees why.
 */
export function supervise(config: Config, log: Logger, liveness: Liveness, giveUp: (error: Error) => void): Supervision {
  return {
    lost: (pid) =>
      log.warn({ component: 'postgres', pid, data_dir: config.dataDir }, 'embedded PostgreSQL ended unexpectedly; starting it again'),
    recovered: (outageMs) => log.info({ component: 'postgres', outage_ms: outageMs }, 'embedded PostgreSQL running again'),
    failed: (error) => {
      liveness.failure = `embedded PostgreSQL could not be started again: ${error.message.split('\n')[0]}`;
      log.error({ component: 'postgres', err: error }, 'embedded PostgreSQL could not be started again; exiting');
      setTimeout(() => giveUp(error), LIVENESS_FAILING_MS);
    },
    recoveryWindowMs: config.embeddedRecoveryWindowMs,
  };
}

export interface OwnerDatabase {
  database: Database;
  /** Owner connection: migrations, the delivery worker, housekeeping (request work runs on the request pool). */
  pool: Pool;
  close(): Promise<void>;
}

/** The database opened and migrated; a server gone again before the migrations ran is waited for like one that never answered. */
export async function openOwnerDatabase(
  config: Config,
  { log, wait, supervision }: { log: Logger; wait: DatabaseWait; supervision: Supervision },
): Promise<OwnerDatabase> {
  let pool: Pool | undefined;
  try {
    const database = await openDatabase(config, {
      log: (line) => log.debug({ component: 'postgres' }, line),
      wait,
      supervision,
      prepare: async (url) => {
        pool ??= createPool(url, 20);
        const { applied } = await migrate(pool);
        if (applied.length) log.info({ applied }, 'migrations applied');
      },
    });
    const owner = pool!;
    return {
      database,
      pool: owner,
      async close() {
        await owner.end();
        await database.stop();
      },
    };
  } catch (error) {
    await pool?.end().catch(() => {});
    throw error;
  }
}

export interface AppContext extends ProcessLog {
  config: Config;
  owner: OwnerDatabase;
  metrics: Metrics;
  liveness: Liveness;
  keyed: Keyed;
  wait: DatabaseWait;
}

type App = Awaited<ReturnType<typeof buildApp>> | Awaited<ReturnType<typeof buildWorkerApp>>;

/** `worker` alone: the app that answers probes and scrapes on WORKER_PORT. */
export function takeWorkerApp(resources: Resources, context: AppContext): Promise<App> {
  const { config, owner, metrics, liveness, logStream } = context;
  const open = () => buildWorkerApp({ config, pool: owner.pool, metrics, liveness, ...(logStream ? { logStream } : {}) });
  return resources.take('app', open, (app) => app.close());
}

/** `serve`: Redis (RATE_LIMIT across instances), the request pool, the caches with their LISTEN connection, and the API. */
export async function takeApp(resources: Resources, context: AppContext): Promise<App> {
  const { config, owner, log, wait } = context;
  const redis = config.redisUrl
    ? await resources.take(
        'redis',
        () => connectRateLimitRedis(config.redisUrl!, log),
        (client) => client.disconnect(),
      )
    : undefined;
  if (config.databaseAppUrl) await reachDatabase('DATABASE_APP_URL', config.databaseAppUrl, wait);
  const openPool = () => openRequestPool({ ownerPool: owner.pool, ownerUrl: owner.database.url, appUrl: config.databaseAppUrl, max: 20 });
  const pool = await resources.take('request pool', openPool, (opened) => opened.end());
  // Credential and read caches, on only while their LISTEN connection is (src/cache).
  const caches = config.cacheMaxAgeSeconds > 0 ? createProcessCaches({ maxAgeMs: config.cacheMaxAgeSeconds * 1000 }) : undefined;
  if (caches) {
    await resources.take(
      'cache listener',
      () => listenForInvalidations(owner.database.url, caches, log),
      (listener) => listener.close(),
    );
  }
  const { metrics, keyed, liveness, logStream } = context;
  const open = () =>
    buildApp({
      config,
      pool,
      ownerPool: owner.pool,
      metrics,
      keyed,
      liveness,
      ...(logStream ? { logStream } : {}),
      ...(redis ? { redis } : {}),
      ...(caches ? { caches } : {}),
    });
  return resources.take('app', open, (app) => app.close());
}
