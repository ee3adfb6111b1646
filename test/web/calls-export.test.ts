// GET /ui/calls.csv over real HTTP: streamed in keyset batches (chunked, no
// Content-Length), every call exactly once across batch boundaries, newest
// first, only the signed-in organization's calls, and bad filters refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { csvCell } from '../../src/calls/calls-csv.ts';
import { EXPORT_BATCH } from '../../src/calls/calls.service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createMember, type Member } from '../helpers/fixtures.ts';
import { UserAgent } from '../helpers/user-agent.ts';
import { signedInAgent } from '../helpers/web.ts';

describe('calls CSV export', () => {
  let t: TestApp;
  let member: Member;
  const total = EXPORT_BATCH * 2 + 1;
  before(async () => {
    t = await startTestApp({ listen: true });
    member = await createMember(t.db.pool);
    const stranger = await createMember(t.db.pool);
    // Many calls sharing timestamps, so the keyset must order by (created_at, id) to lose none.
    await t.db.pool.query(
      `INSERT INTO calls (organization_id, created_at) SELECT $1, now() - make_interval(secs => g / 7) FROM generate_series(1, $2) g`,
      [member.org.id, total],
    );
    await t.db.pool.query('INSERT INTO calls (organization_id) VALUES ($1)', [stranger.org.id]);
  });
  after(() => t.close());

  test(`${total} calls arrive streamed, each once, newest first`, async () => {
    const agent = await signedInAgent(t.url, member.email);
    const res = await fetch(`${t.url}/ui/calls.csv`, { headers: { cookie: [...agent.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="calls-\d{4}-\d{2}-\d{2}\.csv"$/);
    assert.equal(res.headers.get('content-length'), null, 'streamed, not measured up front');
    assert.equal(res.headers.get('transfer-encoding'), 'chunked');
    const lines = (await res.text()).split('\r\n').slice(1, -1);
    assert.equal(lines.length, total);
    const ids = lines.map((line) => line.split(',')[0]);
    assert.equal(new Set(ids).size, total);
    const times = lines.map((line) => line.split(',')[1]!);
    assert.deepEqual(times, [...times].sort().reverse());
    const { rows } = await t.db.pool.query('SELECT id FROM calls WHERE organization_id = $1', [member.org.id]);
    assert.deepEqual(new Set(ids), new Set(rows.map((r) => r.id)));
  });

  test('bad filters are a 400 naming the field; a visitor is sent to sign in', async () => {
    const agent = await signedInAgent(t.url, member.email);
    const res = await agent.get('/ui/calls.csv?agent=nobody');
    assert.equal(res.status, 400);
    assert.match(res.body, /agent/);
    const visitor = await new UserAgent(t.url).get('/ui/calls.csv');
    assert.equal(visitor.status, 302);
    assert.match(visitor.location ?? '', /^\/login\?return_to=/);
  });

  test('cells: quoted when needed, quotes doubled, formulas neutralised', () => {
    assert.equal(csvCell('plain'), 'plain');
    assert.equal(csvCell(null), '');
    assert.equal(csvCell(42), '42');
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('two\nlines'), '"two\nlines"');
    for (const formula of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx']) assert.equal(csvCell(formula)[0] === '"' ? csvCell(formula)[1] : csvCell(formula)[0], "'", formula);
    assert.equal(csvCell('=A1,B1'), `"'=A1,B1"`);
  });
});
