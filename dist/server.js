// Process lifecycle for `switchboard serve` and `switchboard worker`: open the
// database (embedded or DATABASE_URL), migrate, start HTTP and/or background
// workers, and on SIGINT/SIGTERM stop them in reverse order: HTTP first (drain
// requests), then workers, then the pool, then the embedded PostgreSQL.
import { pino } from 'pino';
import { buildApp, buildWorkerApp } from './app.js';
import { startMaintenance } from './background.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { resolveSecretKey } from './config/secret-key.js';
import { createMetrics } from './metrics/metrics.js';
import { startDeliveryWorker } from './webhooks/delivery/worker.js';
import { createSecretBox } from './webhooks/secret-box.js';
import { connectRateLimitRedis } from './http/rate-limit-redis.js';
export async function run(config, options) {
    const log = pino({ level: config.logLevel });
    let database;
    let pool;
    let redis;
    const tasks = [];
    let app;
    const stop = async () => {
        await app?.close();
        await Promise.all(tasks.map((task) => task.stop()));
        await pool?.end();
        redis?.disconnect();
        await database?.stop();
    };
    try {
        database = await openDatabase(config, (line) => log.debug({ component: 'postgres' }, line));
        pool = createPool(database.url, 20);
        const { applied } = await migrate(pool);
        if (applied.length)
            log.info({ applied }, 'migrations applied');
        if (config.webhookAllowPrivateTargets) {
            log.warn('WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhook deliveries may reach loopback and private networks; never use this in production');
        }
        const metrics = createMetrics({ processMetrics: true });
        if (options.workers) {
            tasks.push(...startMaintenance({ pool, config, log }));
            const secretBox = createSecretBox(await resolveSecretKey(config));
            tasks.push(await startDeliveryWorker({ pool, databaseUrl: database.url, config, log, metrics, secretBox }));
        }
        if (!options.http) {
            // A standalone worker still answers probes and scrapes (WORKER_PORT).
            app = await buildWorkerApp({ config, pool, metrics });
            const url = await app.listen({ port: config.workerPort, host: config.host });
            return { url, stop };
        }
        if (config.redisUrl)
            redis = await connectRateLimitRedis(config.redisUrl, log);
        app = await buildApp({ config, pool, metrics, ...(redis ? { redis } : {}) });
        const url = await app.listen({ port: config.port, host: config.host });
        return { url, stop };
    }
    catch (error) {
        await stop().catch(() => { });
        throw error;
    }
}
/** Runs until SIGINT or SIGTERM, then stops cleanly and exits. */
export async function runUntilSignalled(config, options) {
    const running = await run(config, options);
    if (options.http)
        process.stdout.write(`Switchboard listening on ${running.url} (BASE_URL ${config.baseUrl})\n`);
    else
        process.stdout.write(`Switchboard worker running; health and metrics on ${running.url}\n`);
    let stopping = false;
    const shutdown = (signal) => {
        if (stopping)
            return;
        stopping = true;
        process.stdout.write(`${signal} received, shutting down\n`);
        const force = setTimeout(() => process.exit(1), 30_000);
        force.unref();
        running.stop().then(() => process.exit(0), (error) => {
            process.stderr.write(`shutdown failed: ${error.message}\n`);
            process.exit(1);
        });
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
}
//# sourceMappingURL=server.js.map