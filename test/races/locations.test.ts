// Locations deleted while another is made primary. Making a primary clears
// the previous one and marks the new one in one transaction (behind a
// per-organization lock); a deletion beside it may remove either. Invariants:
// no 5xx, no error-level log line, no deadlock; never two primaries; a "make
// primary" answered 200 leaves its location primary unless a later one, or
// its own deletion, took that away; one whose location was deleted is a 404
// that changed nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMember } from '../helpers/fixtures.ts';
import { assertNo5xx, assertNoErrorLogs, assertRaced, pause, race, withRaceRig } from '../helpers/races.ts';
import { asUser } from '../helpers/token-client.ts';

describe('a location deleted while another is made primary', () => {
  // The race rig checks PostgreSQL's deadlock count for the database once it is done.
  test('exactly one primary holds while the other locations come and go', (ctx) =>
    withRaceRig({ env: { RATE_LIMIT: '100000/min' } }, async ({ t }) => {
      const member = await createMember(t.db.pool);
      const api = asUser(t.app, member.token);
      const anchor = (await api.post('/locations', { name: 'Head office', is_primary: true })).json().id as string;
      const primaries = async () =>
        (
          await t.db.pool.query<{ id: string }>('SELECT id FROM locations WHERE organization_id = $1 AND is_primary', [member.org.id])
        ).rows.map((r) => r.id);
      let made = 0;
      let missing = 0;
      /** How long a "make primary" takes, as last seen (a running mean). */
      let primaryMs = 10;

      const rounds = await race(
        { rounds: 400, maxMs: 5000 },
        // A branch is created, made primary by one request while another deletes it; then the head office is
        // made primary again. Its deletion may come before, during or after the "make primary".
        async (round) => {
          const created = await api.post('/locations', { name: `Branch ${round}`, ...(round % 3 === 0 ? { is_primary: true } : {}) });
          assertNo5xx('POST /locations', created);
          assert.equal(created.statusCode, 201, created.body);
          const branch = created.json().id as string;
          const [primary, deleted] = await Promise.all([
            round % 2 ? api.post(`/locations/${branch}/primary`) : api.patch(`/locations/${branch}`, { is_primary: true }),
            // Deleted at a moment spread over how long a "make primary" takes (measured below), so that some
            // deletions land before it, some during it and some after.
            pause(Math.round((primaryMs * (round % 8)) / 6)).then(() => api.delete(`/locations/${branch}`)),
          ]);
          assertNo5xx('make primary', primary);
          assertNo5xx('DELETE /locations/{id}', deleted);
          assert.ok(
            primary.statusCode === 200 || primary.statusCode === 404,
            `make primary answered ${primary.statusCode}: ${primary.body}`,
          );
          assert.equal(deleted.statusCode, 204, deleted.body);
          if (primary.statusCode === 200) made++;
          else missing++;
          const left = await primaries();
          assert.ok(left.length <= 1, `at most one primary (${left.length})`);
          // The branch is gone; the head office is primary unless the branch took that away before going.
          if (primary.statusCode === 404)
            assert.ok(left.length === 1 || round % 3 === 0, 'a make-primary that found nothing changed nothing');
          const started = performance.now();
          const back = await api.post(`/locations/${anchor}/primary`);
          primaryMs = (primaryMs + performance.now() - started) / 2;
          assert.equal(back.statusCode, 200, back.body);
          assert.deepEqual(await primaries(), [anchor], 'exactly one primary: the head office');
        },
        // Readers, and other locations of the organization created and deleted.
        async (round) => {
          const [list, other] = await Promise.all([api.get('/locations'), api.post('/locations', { name: `Reader ${round}` })]);
          assertNo5xx('GET /locations', list);
          assert.equal(list.statusCode, 200);
          assert.ok((list.json() as { is_primary: boolean }[]).filter((l) => l.is_primary).length <= 1, 'a list shows at most one primary');
          assert.equal(other.statusCode, 201, other.body);
          const gone = await api.delete(`/locations/${other.json().id}`);
          assert.equal(gone.statusCode, 204, gone.body);
        },
      );
      ctx.diagnostic(
        `rounds: ${rounds.join(', ')}; made primary ${made}, location already gone ${missing}; a make-primary took about ${Math.round(primaryMs)} ms`,
      );
      assertRaced(rounds);
      // Both orders happened: a "make primary" that found its branch, and one whose branch was already gone.
      assert.ok(made > 0 && missing > 0, `made primary ${made}, location already gone ${missing}`);
      assert.ok((await primaries()).length <= 1);
      assertNoErrorLogs(t.logs);
    }));
});
