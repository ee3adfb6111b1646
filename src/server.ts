// Process lifecycle for `switchboard serve` and `switchboard worker`: a list
// of resources taken in order (the log, the waiting probes, the database,
// the tasks, the application on its port) and given back in reverse on
// SIGINT/SIGTERM: HTTP first (drain requests), then the tasks, then the
// pools, then the embedded PostgreSQL, the trace exporter last. A failure at
// any step of the start gives back what was taken.
import { buildKeyed } from './app.ts';
import { workerTasks } from './background.ts';
import type { Config } from './config/config.ts';
import { checkListenAddress } from './config/listen-host.ts';
import type { DatabaseWait } from './db/reach-database.ts';
import { createMetrics } from './metrics/metrics.ts';
import type { Liveness } from './probes/liveness-server.ts';
import { waitingProbes } from './probes/waiting-server.ts';
import { openLog, openOwnerDatabase, supervise, takeApp, takeWorkerApp, type AppContext } from './server-resources.ts';
import { resourceStack } from './tasks/resources.ts';
import { startAll, stopAll } from './tasks/task.ts';
import { startTracing, stopTracing } from './tracing/start-tracing.ts';
import { loadTracingConfig } from './tracing/tracing-config.ts';

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

/** `signal` ends a wait for the database at once (a SIGTERM during it): run() then throws its reason. */
export async function run(config: Config, options: RunOptions, signal?: AbortSignal): Promise<Running> {
  const resources = resourceStack();
  // Before anything logs or queries: spans and log fields start with the process (src/tracing); its spans go out last.
  await resources.take('tracing', () => startTracing(loadTracingConfig()), stopTracing);
  const gaveUp = settledLater<Error>();
  try {
    const { log, logStream } = await openLog(config);
    // Once an external database is found away at start, the port answers probes
    // (/readyz 503) until the application takes it over.
    const probes = await resources.take(
      'probes',
      () => waitingProbes(config.host, options.http ? config.port : config.workerPort),
      (p) => p.stop(),
    );
    const wait: DatabaseWait = { log, onWaiting: () => probes.start(), ...(signal ? { signal } : {}) };
    const liveness: Liveness = {};
    await checkListenAddress(config.host, options.http ? config.port : config.workerPort, options.http ? 'PORT' : 'WORKER_PORT');
    const supervision = supervise(config, log, liveness, gaveUp.settle);
    const owner = await resources.take(
      'database',
      () => openOwnerDatabase(config, { log, wait, supervision }),
      (db) => db.close(),
    );
    if (config.webhookAllowPrivateTargets) log.warn(PRIVATE_TARGETS_WARNING);
    const metrics = createMetrics({ processMetrics: true });
    const keyed = await buildKeyed(config);
    if (options.workers) {
      // Running attempts get most of the shutdown time to finish; the rest are handed back.
      const drainMs = workerDrainMs(config.shutdownTimeoutMs);
      const context = { pool: owner.pool, config, log, metrics, keys: keyed.keys, secretBox: keyed.webhookSecrets, drainMs };
      const tasks = workerTasks({ ...context, databaseUrl: owner.database.url });
      await resources.take(
        'tasks',
        () => startAll(tasks),
        () => stopAll(tasks),
      );
    }
    const context: AppContext = { config, owner, metrics, liveness, keyed, wait, log, ...(logStream ? { logStream } : {}) };
    // A standalone worker still answers probes and scrapes (WORKER_PORT).
    const app = options.http ? await takeApp(resources, context) : await takeWorkerApp(resources, context);
    await probes.stop();
    const url = await app.listen({ port: probes.port, host: config.host });
    return { url, stop: () => resources.release(), gaveUp: gaveUp.promise };
  } catch (error) {
    await resources.release().catch(() => {});
    throw error;
  }
}

const PRIVATE_TARGETS_WARNING =
  'WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhook deliveries may reach loopback and private networks (on any port unless WEBHOOK_ALLOWED_PORTS is set); never use this in production';

function settledLater<T>(): { promise: Promise<T>; settle: (value: T) => void } {
  let settle: (value: T) => void = () => {};
  const promise = new Promise<T>((resolve) => (settle = resolve));
  return { promise, settle };
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
