import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { housekeepingJobs } from '../../src/background.ts';
import { tickByHand } from '../../src/tasks/task.ts';
import { purgeAuditLog } from '../../src/audit/retention.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember } from '../helpers/fixtures.ts';

// AUDIT_RETENTION: the maintenance task removes older events, in batches; newer ones stay.
describe('audit log retention', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { AUDIT_RETENTION: '30d' } });
  });
  after(() => t.close());

  async function eventsAged(organizationId: string, count: number, age: string): Promise<void> {
    await t.db.pool.query(
      `INSERT INTO audit_events (organization_id, occurred_at, type, actor_type, actor_label, subject_type, subject_id)
       SELECT $1, now() - $3::interval, 'circuit.opened', 'system', 'worker', 'subscription', gen_random_uuid()::text
         FROM generate_series(1, $2)`,
      [organizationId, count, age],
    );
  }
  const left = async (organizationId: string) =>
    (await t.db.pool.query('SELECT count(*)::int AS n FROM audit_events WHERE organization_id = $1', [organizationId])).rows[0].n;

  test('events older than AUDIT_RETENTION are removed in batches; younger ones stay', async () => {
    const member = await createMember(t.db.pool);
    await eventsAged(member.org.id, 12, '31 days');
    await eventsAged(member.org.id, 3, '29 days');
    assert.equal(await purgeAuditLog(t.db.pool, t.config.auditRetentionMs, new Date(), 5), 12);
    assert.equal(await left(member.org.id), 3);
  });

  test('the hourly maintenance runs it with AUDIT_RETENTION', async () => {
    const member = await createMember(t.db.pool);
    await eventsAged(member.org.id, 2, '40 days');
    await eventsAged(member.org.id, 1, '1 day');
    const job = housekeepingJobs({ pool: t.db.pool, config: t.config }).find((j) => j.name === 'audit-log-retention');
    assert.ok(job);
    await job.run(tickByHand);
    assert.equal(await left(member.org.id), 1);
  });
});
