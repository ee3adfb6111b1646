// GET /ui/calls.csv over real HTTP: streamed in keyset batches (chunked, no
// Content-Length), every call exactly once across batch boundaries, newest
// first, only the signed-in organization's calls, and bad filters refused;
// every cell inert text whichever separator a spreadsheet splits on.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CALLS_CSV_HEADER, csvCell, csvLine } from '../../src/calls/calls-csv.ts';
import { EXPORT_BATCH } from '../../src/calls/call-reads.service.ts';
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
    const ids = lines.map((line) => line.split(',')[0]!.slice(1, -1));
    assert.equal(new Set(ids).size, total);
    const times = lines.map((line) => line.split(',')[1]!.slice(1, -1));
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

  test('cells: text always quoted, quotes doubled, formula starts neutralised at every place a cell may begin', () => {
    assert.equal(csvCell('plain'), '"plain"');
    assert.equal(csvCell(null), '');
    assert.equal(csvCell(42), '42');
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('two\nlines'), '"two\nlines"');
    // [value, the text a spreadsheet honouring the quotes shows]
    const cases: [string, string][] = [
      // A formula start at the beginning of the cell.
      ['=1+1', "'=1+1"],
      ['+1', "'+1"],
      ['-1', "'-1"],
      ['@SUM(A1)', "'@SUM(A1)"],
      ['\tx', "'\tx"],
      ['\rx', "'\rx"],
      ['  =1+1', "  '=1+1"],
      // After a separator of some locale or import: the cells a splitting reader would see.
      ['x;=1+1;y', "x;'=1+1;y"],
      ['x,=1+1,y', "x,'=1+1,y"],
      ['x\t=1+1\ty', "x\t'=1+1\ty"],
      ['x; +1', "x; '+1"],
      ['x;-1', "x;'-1"],
      ['x,@SUM(A1)', "x,'@SUM(A1)"],
      ['x\r\n=1+1', "x\r\n'=1+1"],
      ['x\n@A1', "x\n'@A1"],
      ['x;\t=1', "x;'\t'=1"],
      ['x\t\r=1', "x\t'\r'=1"],
      // A quote that a reader ignoring quotes could take as opening a cell.
      ['x;"=1+1', `x;"'=1+1`],
      // Unicode: full-width signs (an import folding compatibility forms reads them as ASCII), and any
      // whitespace an import trimming Unicode whitespace drops, before a formula start.
      ['\uff1d1+1', "'\uff1d1+1"],
      ['x;\uff0b1+1', "x;'\uff0b1+1"],
      ['\uff0d1', "'\uff0d1"],
      ['\uff20SUM(A1)', "'\uff20SUM(A1)"],
      ['x;\u00a0=1+1', "x;\u00a0'=1+1"],
      ['x;\u3000=1+1', "x;\u3000'=1+1"],
      ['x;\v=1+1', "x;\v'=1+1"],
      ['x\uff1b=1+1', "x\uff1b'=1+1"],
      ['x\u2028=1+1', "x\u2028'=1+1"],
      // Inside text, not at a cell's start: left alone.
      ['1+1=2', '1+1=2'],
      ['a - b', 'a - b'],
      ['mail@example.com', 'mail@example.com'],
    ];
    for (const [value, shown] of cases) assert.equal(csvCell(value), `"${shown.replace(/"/g, '""')}"`, JSON.stringify(value));
    assert.equal(csvCell('=HYPERLINK("https://evil.example","click")'), `"'=HYPERLINK(""https://evil.example"",""click"")"`);
    for (const value of PAYLOADS) assertInert(csvLine([value]));
  });

  test('cells: every character that folds to a formula start or a separator, and every kind of whitespace, is covered', () => {
    const formulaStarts = foldingTo('=+-@');
    const separators = foldingTo(',;"');
    const spaces = everyCodePoint().filter((c) => /^[\s\p{White_Space}\u200b]$/u.test(c));
    assert.ok(formulaStarts.includes('\uff1d') && separators.includes('\uff1b') && spaces.includes('\u3000'));
    for (const sign of formulaStarts) {
      assertInert(csvLine([`${sign}1`]));
      for (const separator of [...separators, '\t', '\n']) {
        assertInert(csvLine([`x${separator}${sign}1`]));
        for (const space of spaces) assertInert(csvLine([`x${separator}${space}${sign}1`]));
      }
    }
  });

  test('the export over HTTP: every text cell quoted, and no separator exposes a formula', async () => {
    const org = await createMember(t.db.pool);
    const { rows: agents } = await t.db.pool.query<{ id: string }>(
      'INSERT INTO agents (organization_id, name) SELECT $1, unnest($2::text[]) RETURNING id',
      [org.org.id, PAYLOADS],
    );
    const {
      rows: [location],
    } = await t.db.pool.query<{ id: string }>(`INSERT INTO locations (organization_id, name) VALUES ($1, 'Leeds') RETURNING id`, [
      org.org.id,
    ]);
    // Every column filled, the typed ones (transcript, location name) with the payloads too.
    await t.db.pool.query(
      `INSERT INTO calls (organization_id, status, completed_at, summary, duration_seconds, agent_id, direction, from_number,
                          to_number, location_id, location_name, recording_url, transcript)
       SELECT $1, 'completed', now(), p.summary, 7, p.agent, 'inbound', '+442079460123', '+14155550199', $4, p.summary,
              'https://r.example/1', p.summary
         FROM unnest($2::text[], $3::uuid[]) AS p(summary, agent)`,
      [org.org.id, PAYLOADS, agents.map((a) => a.id), location!.id],
    );
    const agent = await signedInAgent(t.url, org.email);
    const res = await agent.get('/ui/calls.csv');
    assert.equal(res.status, 200);
    const records = parseCsv(res.body);
    assert.deepEqual(records[0], CALLS_CSV_HEADER);
    assert.equal(records.length - 1, PAYLOADS.length);
    const summaries = new Set(records.slice(1).map((r) => r[7]));
    const names = new Set(records.slice(1).map((r) => r[5]));
    const transcripts = new Set(records.slice(1).map((r) => r[CALLS_CSV_HEADER.indexOf('transcript')]));
    for (const [value, shown] of PAYLOADS.map((p, i) => [p, SHOWN[i]!])) {
      assert.ok(summaries.has(shown), `summary ${JSON.stringify(value)}`);
      assert.ok(names.has(shown), `agent name ${JSON.stringify(value)}`);
      assert.ok(transcripts.has(shown), `transcript ${JSON.stringify(value)}`);
    }
    for (const record of records) assert.equal(record.length, CALLS_CSV_HEADER.length);
    // Every text cell opens with a quote: cut at the separators between cells (a quote-aware split).
    for (const [n, line] of splitRecords(res.body).entries()) {
      for (const [i, cell] of line.entries()) {
        if (n > 0 && CALLS_CSV_HEADER[i] === 'duration_seconds') assert.equal(cell, '7', 'a number is written bare');
        else assert.match(cell, /^".*"$/s, `${CALLS_CSV_HEADER[i]}: ${cell}`);
      }
    }
    assertInert(res.body);
  });
});

/** Payloads a caller could put in a summary or an agent could be named. */
const PAYLOADS = [
  'x;=1+1;y',
  'x,=1+1,y',
  'x\t=1+1\ty',
  '=1+1',
  '+1+1',
  '-1+1',
  '@SUM(1+1)',
  '\t=1+1',
  '\r=1+1',
  ' =1+1',
  'ok; +cmd|" /C calc"!A0',
  'a\n-2+3',
  'x;"=1+1',
  '\uff1d1+1',
  'x;\uff0b1+1',
  'x;\u00a0=1+1',
  'x;\u3000=1+1',
  'x;\v=1+1',
  '=HYPERLINK("https://evil.example","click")',
  'Booked a visit; call back, please.',
];
/** What a spreadsheet honouring the quotes shows for each payload. */
const SHOWN = [
  "x;'=1+1;y",
  "x,'=1+1,y",
  "x\t'=1+1\ty",
  "'=1+1",
  "'+1+1",
  "'-1+1",
  "'@SUM(1+1)",
  "'\t'=1+1",
  "'\r'=1+1",
  " '=1+1",
  `ok; '+cmd|" /C calc"!A0`,
  "a\n'-2+3",
  `x;"'=1+1`,
  "'\uff1d1+1",
  "x;'\uff0b1+1",
  "x;\u00a0'=1+1",
  "x;\u3000'=1+1",
  "x;\v'=1+1",
  `'=HYPERLINK("https://evil.example","click")`,
  'Booked a visit; call back, please.',
];

/**
 * Splits `text` as a reader ignoring quotes would, on each separator in turn
 * (`,`, `;`, tab, line ends, Python's splitlines() ones included), dropping the
 * whitespace and quote characters such a reader may trim: no fragment may begin
 * with a formula start. The text is first folded to its compatibility forms
 * (NFKC), as an import may fold full-width `＝` to `=`; the folded text holds
 * every ASCII formula start of the original too.
 */
function assertInert(text: string): void {
  const folded = text.normalize('NFKC');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the file, group and record separators are line breaks to splitlines()
  for (const separator of [',', ';', '\t', /\r\n|[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/]) {
    for (const fragment of folded.split(separator)) {
      assert.doesNotMatch(
        fragment.replace(/^[\s\p{White_Space}\u200b"]+/u, ''),
        /^[=+\-@]/,
        `${JSON.stringify(fragment)} split on ${String(separator)} in ${JSON.stringify(text)}`,
      );
    }
  }
}

/** Every Unicode scalar value, as a one-character string. */
function everyCodePoint(): string[] {
  const all: string[] = [];
  for (let c = 0; c <= 0x10ffff; c++) if (c < 0xd800 || c > 0xdfff) all.push(String.fromCodePoint(c));
  return all;
}

/** The characters whose compatibility form (NFKC) is one of `ascii`'s characters, those included. */
function foldingTo(ascii: string): string[] {
  return everyCodePoint().filter((c) => c.normalize('NFKC').length === 1 && ascii.includes(c.normalize('NFKC')));
}

/** The raw cells of each record (quotes kept), cut where RFC 4180 cuts them. */
function splitRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === ',') {
      record.push(text.slice(start, i));
      start = i + 1;
    } else if (!quoted && c === '\r' && text[i + 1] === '\n') {
      record.push(text.slice(start, i));
      records.push(record);
      record = [];
      start = ++i + 1;
    }
  }
  assert.equal(start, text.length, 'the file ends with CRLF');
  return records;
}

/** RFC 4180 as a spreadsheet honouring the quotes reads it. */
function parseCsv(text: string): string[][] {
  return splitRecords(text).map((record) => record.map((cell) => (cell.startsWith('"') ? cell.slice(1, -1).replace(/""/g, '"') : cell)));
}
