// A real application on a real database, for app.inject() or real HTTP.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { buildApp } from '../../src/app.ts';
import type { ProcessCaches } from '../../src/cache/process-caches.ts';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { requestRoleUrl } from '../../src/db/request-pool.ts';

export interface TestApp {
  app: FastifyInstance;
  db: TestDatabase;
  config: Config;
  /** Every JSON log line the app wrote. */
  logs: string[];
  /** Base URL when started with listen: true. */
  url: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /**
   * Serve real HTTP on 127.0.0.1 with BASE_URL set to that very URL (unless
   * env.BASE_URL says otherwise), so OAuth issuer and redirects match what a real
   * client sees. The socket is bound before the app is built (the URL configures
   * it), and Fastify's own request handler (app.routing) serves it.
   */
  listen?: boolean;
  /** Share another app's database (it stays open when this app closes). */
  db?: TestDatabase;
  /** Rate-limit store; in memory when absent. The caller owns the connection. */
  redis?: Redis;
  /** Prefix of rate-limit keys; the database name when absent. */
  rateLimitNamespace?: string;
  /** Serve requests on this pool instead of a switchboard_request pool of its own (the caller ends it). */
  pool?: Pool;
  /** Process caches, as `serve` passes them (the caller keeps them true, e.g. with listenForInvalidations); none when absent. */
  caches?: ProcessCaches;
  /** Adds test-only routes before the app starts serving (a listening app takes no new routes). */
  setup?: (app: FastifyInstance) => unknown;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  let server: http.Server | undefined;
  let url = '';
  if (options.listen) {
    const listening = http.createServer();
    server = listening;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(0, '127.0.0.1', resolve);
    });
    url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  }
  const db = options.db ?? (await createTestDatabase());
  const config = loadConfig({
    LOG_LEVEL: 'info',
    DATA_DIR: '/nonexistent',
    SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    // Webhook tests make many requests with one grant in a few seconds; test/webhooks/webhook-rate-limit.test.ts sets its own.
    WEBHOOK_RATE_LIMIT: '100000/min',
    ...(url ? { BASE_URL: url } : {}),
    ...options.env,
    DATABASE_URL: db.url,
  });
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(chunk.toString());
      callback();
    },
  });
  // Requests run as switchboard_request, as in production; fixtures use the owner pool (db.pool).
  const ownAppPool = options.pool ? undefined : createPool(requestRoleUrl(db.url), 10);
  const appPool = options.pool ?? ownAppPool!;
  const app = await buildApp({
    config,
    pool: appPool,
    ownerPool: db.pool,
    logStream,
    rateLimitNamespace: options.rateLimitNamespace ?? db.name,
    ...(options.redis ? { redis: options.redis } : {}),
    ...(options.caches ? { caches: options.caches } : {}),
  });
  await options.setup?.(app);
  if (server) {
    await app.ready();
    server.on('request', app.routing);
  }
  return {
    app,
    db,
    config,
    logs,
    url,
    async close() {
      if (server) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      await app.close();
      await ownAppPool?.end();
      if (!options.db) await db.drop();
    },
  };
}
