// A real application on a real database, for app.inject() or real HTTP.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { Writable } from 'node:stream';
import { buildApp } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

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
  listen?: boolean;
  /** Share another app's database (it stays open when this app closes). */
  db?: TestDatabase;
  /** Rate-limit store; in memory when absent. The caller owns the connection. */
  redis?: Redis;
  /** Prefix of rate-limit keys; the database name when absent. */
  rateLimitNamespace?: string;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.db ?? (await createTestDatabase());
  const config = loadConfig({ LOG_LEVEL: 'info', DATA_DIR: '/nonexistent', SECRET_KEY: Buffer.alloc(32, 7).toString('base64'), ...options.env, DATABASE_URL: db.url });
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(chunk.toString());
      callback();
    },
  });
  const app = await buildApp({
    config,
    pool: db.pool,
    logStream,
    rateLimitNamespace: options.rateLimitNamespace ?? db.name,
    ...(options.redis ? { redis: options.redis } : {}),
  });
  let url = '';
  if (options.listen) url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    app,
    db,
    config,
    logs,
    url,
    async close() {
      await app.close();
      if (!options.db) await db.drop();
    },
  };
}
