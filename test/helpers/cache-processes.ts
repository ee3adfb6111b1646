// Two apps on one database standing for two serve processes, each with its own
// caches kept true by its own LISTEN connection (src/cache/cache-listener.ts),
// as `serve` runs them. Entries live 60 s, so within a test only a
// notification can end them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { CACHE_CHANNEL, listenForInvalidations, type CacheListener } from '../../src/cache/cache-listener.ts';
import type { CacheSlot } from '../../src/cache/caches.ts';
import { createProcessCaches, type ProcessCaches } from '../../src/cache/process-caches.ts';
import { tags } from '../../src/cache/tags.ts';
import { startTestApp, type TestApp } from './app.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

export interface CacheProcess {
  t: TestApp;
  caches: ProcessCaches;
  listener: CacheListener;
}

export interface CacheProcesses {
  db: TestDatabase;
  processes: CacheProcess[];
  /**
   * Returns once every process has handled every notification committed
   * before this call: a probe entry tagged with a fresh tag is stored in each
   * process, the tag is sent after them, and PostgreSQL delivers notifications
   * in commit order, so a process that dropped its probe has handled the earlier ones.
   */
  notificationsHandled(): Promise<void>;
  close(): Promise<void>;
}

const PROBE: CacheSlot<string> = { cache: 'reads' };

export async function startCacheProcesses(count = 2): Promise<CacheProcesses> {
  const db = await createTestDatabase();
  const processes: CacheProcess[] = [];
  for (let i = 0; i < count; i++) {
    const caches = createProcessCaches({ maxAgeMs: 60_000 });
    const listener = await listenForInvalidations(db.url, caches, pino({ level: 'silent' }));
    const t = await startTestApp({ db, caches });
    processes.push({ t, caches, listener });
  }
  for (const p of processes) assert.ok(p.listener.connected && p.caches.enabled, 'the caches are on');
  return {
    db,
    processes,
    async notificationsHandled() {
      const tag = tags.calls(randomUUID());
      for (const p of processes) p.caches.set(PROBE, tag, 'probe', [tag], p.caches.ticket());
      await db.pool.query('SELECT pg_notify($1, $2)', [CACHE_CHANNEL, tag]);
      const deadline = Date.now() + 10_000;
      while (processes.some((p) => p.caches.get(PROBE, tag) !== undefined)) {
        assert.ok(Date.now() < deadline, 'the probe notification never arrived');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    async close() {
      for (const p of processes) {
        await p.t.close();
        await p.listener.close();
      }
      await db.drop();
    },
  };
}
