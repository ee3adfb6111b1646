// The dashboard's rollups under concurrent writes. Viewing the home page and
// a subscription's page stores the counts of sealed days and hours
// (calls_per_day, webhook_attempts_per_hour) while calls are ingested, the
// worker records attempts, and subscriptions are deleted. A subscription's
// stored hours reference it: a view storing them while it is deleted must
// store nothing for it instead of failing. Invariants: no 5xx, no error-level
// log line, no deadlock; stored counts equal the raw rows they count.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createClient, issueTokens, platformHeaders } from '../helpers/oauth.ts';
import { createMember } from '../helpers/fixtures.ts';
import { assertNoErrorLogs, assertRaced, pause, race, withRaceRig } from '../helpers/races.ts';
import { signedInAgent } from '../helpers/web.ts';
import { completeCall } from '../helpers/webhooks.ts';

describe('dashboard rollups under concurrent writes', () => {
  test('home and subscription pages are viewed while calls come in, attempts are recorded and subscriptions deleted', (ctx) =>
    withRaceRig(
      {
        listen: true,
        respond: (_request, index) => ({ status: index % 3 === 2 ? 500 : 200 }),
      },
      async ({ t, target }) => {
        const member = await createMember(t.db.pool);
        const client = await createClient(t.db.pool, { name: 'Charted platform', scopes: ['calls:read'] });
        const tokens = await issueTokens(t.db.pool, {
          client,
          userId: member.user.id,
          organizationId: member.org.id,
          scopes: ['calls:read'],
        });
        const subscribe = async (hookUrl: string) => {
          const res = await t.app.inject({
            method: 'POST',
            url: '/webhooks/subscribe',
            headers: platformHeaders(tokens, client),
            payload: { hookUrl },
          });
          assert.equal(res.statusCode, 201, res.body);
          return res.json().id as string;
        };
        const staying = await subscribe(`${target.url}/staying`);
        // History to seal: calls of the past days, attempts of the past hours (the stored counts are made from these).
        await t.db.pool.query(
          `INSERT INTO calls (organization_id, created_at)
       SELECT $1, now() - make_interval(hours => g * 7) FROM generate_series(1, 60) g`,
          [member.org.id],
        );
        const historical = await completeCall(t, member, { summary: 'old attempts' });
        await t.db.pool.query(
          `INSERT INTO webhook_attempts (organization_id, delivery_id, subscription_id, attempt, attempted_at, status_code, outcome)
       SELECT d.organization_id, d.id, d.subscription_id, 100 + g, now() - make_interval(hours => g), 200, 'succeeded'
         FROM webhook_deliveries d, generate_series(1, 100) g WHERE d.call_id = $1`,
          [historical.id],
        );
        const agent = await signedInAgent(t.url, member.email);
        let current = staying;
        const pages: number[] = [];
        /** Doomed pages shown while their deletion was under way (both requests open at once). */
        let shownBesideDeletion = 0;
        /** How long a subscription's page takes to show, as last seen (a running mean). */
        let viewMs = 20;

        const rounds = await race(
          { rounds: 300, maxMs: 5000 },
          // Subscriptions that come and go; each is viewed (its hours stored) as it goes.
          async (round) => {
            const doomed = await subscribe(`${target.url}/doomed-${round}`);
            current = doomed;
            await completeCall(t, member, { summary: `doomed ${round}` });
            const timed = async <T>(request: () => Promise<T>) => {
              const start = performance.now();
              const answer = await request();
              return { answer, start, end: performance.now() };
            };
            const [view, gone] = await Promise.all([
              timed(() => agent.get(`/ui/webhooks/${doomed}`)),
              // Deleted at a moment spread over how long a page takes to show (measured beside), so that some
              // deletions land before the view, some during it and some after.
              pause(Math.round((viewMs * (round % 8)) / 6)).then(() =>
                timed(() => t.app.inject({ method: 'DELETE', url: `/webhooks/${doomed}`, headers: { 'x-user-token': member.token } })),
              ),
            ]);
            pages.push(view.answer.status);
            if (view.answer.status === 200 && view.start < gone.end && gone.start < view.end) shownBesideDeletion++;
            assert.ok(view.answer.status === 200 || view.answer.status === 404, `the subscription page answered ${view.answer.status}`);
            assert.equal(gone.answer.statusCode, 204, gone.answer.body);
          },
          // Views of the home page and of whichever subscription is newest, beside calls and deliveries.
          async (round) => {
            const viewed = round % 2 ? current : staying;
            const started = performance.now();
            const [home, page] = await Promise.all([
              agent.get('/'),
              agent.get(`/ui/webhooks/${viewed}`).then((answer) => {
                if (viewed === staying) viewMs = (viewMs + performance.now() - started) / 2;
                return answer;
              }),
              completeCall(t, member, { summary: `viewing ${round}` }),
            ]);
            assert.equal(home.status, 200, 'the home page');
            if (viewed === staying) assert.equal(page.status, 200, 'the page of the subscription that stays');
            else assert.ok(page.status === 200 || page.status === 404, `the subscription page answered ${page.status}`);
          },
        );
        const shown = pages.filter((s) => s === 200).length;
        ctx.diagnostic(
          `rounds: ${rounds.join(', ')}; a page took about ${Math.round(viewMs)} ms; doomed pages: ${shown} shown (${shownBesideDeletion} while deleted), ${pages.filter((s) => s === 404).length} gone`,
        );
        assertRaced(rounds);
        // A page answered 404 stored nothing: only pages shown while their subscription was being deleted ran
        // the path this test names (hours stored beside a deletion).
        assert.ok(shownBesideDeletion > 0, 'pages of subscriptions were shown while they were deleted');

        // What was stored is what the rows say.
        const { rows: days } = await t.db.pool.query(
          `SELECT p.day, p.calls, (SELECT count(*)::int FROM calls c WHERE c.organization_id = p.organization_id
                                  AND c.created_at >= p.day::timestamp AT TIME ZONE 'UTC'
                                  AND c.created_at < (p.day + 1)::timestamp AT TIME ZONE 'UTC') AS raw
         FROM calls_per_day p WHERE p.organization_id = $1`,
          [member.org.id],
        );
        assert.ok(days.length > 0);
        for (const d of days) assert.equal(d.calls, d.raw, `calls on ${d.day}`);
        const { rows: hours } = await t.db.pool.query(
          `SELECT p.hour, p.succeeded, (SELECT count(*)::int FROM webhook_attempts a WHERE a.subscription_id = p.subscription_id
                                     AND a.outcome = 'succeeded' AND a.attempted_at >= p.hour AND a.attempted_at < p.hour + interval '1 hour') AS raw
         FROM webhook_attempts_per_hour p WHERE p.subscription_id = $1`,
          [staying],
        );
        assert.ok(hours.length > 0);
        for (const h of hours) assert.equal(h.succeeded, h.raw, `attempts in ${h.hour.toISOString()}`);
        const {
          rows: [orphans],
        } = await t.db.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM webhook_attempts_per_hour p WHERE NOT EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = p.subscription_id)',
        );
        assert.equal(orphans!.n, 0);
        assertNoErrorLogs(t.logs);
      },
    ));
});
