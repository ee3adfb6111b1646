// A real application on a real database, for app.inject() or real HTTP.
import type { FastifyInstance } from 'fastify';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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

/**
 * With listen: true the app serves real HTTP on 127.0.0.1 and BASE_URL is that
 * very URL (unless env.BASE_URL says otherwise), so OAuth issuer and redirects
 * match what a real client sees. The socket is bound before the app is built
 * (the URL must be known to configure it), and Fastify's own request handler
 * (app.routing, the one app.listen would use) serves it.
 */
export async function startTestApp(
  options: {
    env?: Record<string, string>;
    listen?: boolean;
    db?: TestDatabase;
    /** Adds test-only routes before the app starts serving (a listening app takes no new routes). */
    setup?: (app: FastifyInstance) => unknown;
  } = {},
): Promise<TestApp> {
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
    LOG_LEVEL: 'info', DATA_DIR: '/nonexistent', SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
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
  const app = await buildApp({ config, pool: db.pool, logStream, rateLimitNamespace: db.name });
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
      if (!options.db) await db.drop();
    },
  };
}
