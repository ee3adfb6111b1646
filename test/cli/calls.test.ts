import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { HttpsTarget } from '../helpers/https-target.ts';
import type { TestApp } from '../helpers/app.ts';
import { connectPlatform, settled, startDeliveryRig, subscribeHook, type DeliveryRig } from '../helpers/webhooks.ts';

const exec = promisify(execFile);

describe('switchboard agent create | call complete', () => {
  let t: TestApp;
  let target: HttpsTarget;
  let rig: DeliveryRig;
  before(async () => {
    rig = await startDeliveryRig();
    ({ t, target } = rig);
  });
  after(() => rig.close());

  async function cli(...args: string[]) {
    try {
      const { stdout, stderr } = await exec(process.execPath, ['bin/switchboard.js', ...args], {
        env: { ...process.env, DATABASE_URL: t.db.url, SECRET_KEY: t.config.secretKey!.toString('base64'), LOG_LEVEL: 'silent' },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  }

  test('agent create prints {id, name}; call complete prints the completed call and fires call.completed', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/cli`, secret: 'cli-secret' });

    const agentRun = await cli('agent', 'create', '--org', org.member.org.id, '--name', 'Ava', '--json');
    assert.equal(agentRun.code, 0, agentRun.stderr);
    const agent = JSON.parse(agentRun.stdout);
    assert.deepEqual(Object.keys(agent), ['id', 'name']);
    assert.equal(agent.name, 'Ava');

    const callRun = await cli(
      'call',
      'complete',
      '--org',
      org.member.org.id,
      '--summary',
      'Booked a visit',
      '--duration',
      '125',
      '--agent',
      agent.id,
      '--json',
    );
    assert.equal(callRun.code, 0, callRun.stderr);
    assert.equal(callRun.stdout.trim().split('\n').length, 1, 'one JSON object and nothing else on stdout');
    const call = JSON.parse(callRun.stdout);
    assert.equal(call.status, 'completed');
    assert.equal(call.organization_id, org.member.org.id);
    assert.equal(call.agent_id, agent.id);
    assert.equal(call.summary, 'Booked a visit');
    assert.equal(call.duration_seconds, 125);
    assert.ok(call.completed_at);

    const [delivery] = await settled(t, hook.id, 1);
    assert.equal(delivery!.status, 'succeeded');
    const request = target.requests.find((r) => r.url === '/cli')!;
    const { url, ...body } = JSON.parse(request.body);
    assert.deepEqual(body, {
      id: call.id,
      organization_id: org.member.org.id,
      created_at: call.created_at,
      summary: 'Booked a visit',
      duration_seconds: 125,
      agent_id: agent.id,
      direction: null,
      from_number: null,
      to_number: null,
      agent_name: 'Ava',
      location_id: null,
      location_name: null,
      recording_url: null,
      transcript: null,
      metadata: {},
    });
    assert.match(url, new RegExp(`/ui/calls/${call.id}$`));
    assert.equal(request.headers['x-signature'], 'cli-secret', 'the CLI sealed nothing; the worker opened the secret the API sealed');

    const human = await cli('call', 'complete', '--org', org.member.org.id, '--summary', 'No agent', '--duration', '0');
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^completed call [0-9a-f-]{36} \(0s\)\n$/);
  });

  test('call complete --idempotency-key: run again with the same key, it prints the first call and records nothing', async () => {
    const org = await connectPlatform(t);
    const hook = await subscribeHook(t, org, { hookUrl: `${target.url}/cli-idempotent` });
    const args = [
      'call',
      'complete',
      '--org',
      org.member.org.id,
      '--summary',
      'Quote for a new boiler',
      '--duration',
      '95',
      '--idempotency-key',
      'quote-0001',
    ];
    const first = await cli(...args, '--json');
    assert.equal(first.code, 0, first.stderr);
    const again = await cli(...args, '--json');
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, first.stdout, 'the same call, printed the same');
    const human = await cli(...args);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^completed call [0-9a-f-]{36} \(95s, recorded earlier with this idempotency key\)\n$/);

    // The command line is a caller of its own: an API caller with the same key and fields makes its own call.
    const viaApi = await t.app.inject({
      method: 'POST',
      url: '/calls',
      headers: { 'x-user-token': org.member.token, 'idempotency-key': 'quote-0001' },
      payload: { summary: 'Quote for a new boiler', duration_seconds: 95 },
    });
    assert.equal(viaApi.statusCode, 201);
    assert.equal(viaApi.headers['idempotent-replayed'], undefined);
    assert.notEqual(viaApi.json().id, JSON.parse(first.stdout).id);
    assert.equal((await cli(...args, '--json')).stdout, first.stdout, "and the command line's key still names its first call");

    const other = await cli(
      'call',
      'complete',
      '--org',
      org.member.org.id,
      '--summary',
      'Something else',
      '--duration',
      '95',
      '--idempotency-key',
      'quote-0001',
      '--json',
    );
    assert.equal(other.code, 2);
    assert.equal(other.stdout, '');
    assert.match(other.stderr, /^switchboard: --idempotency-key: The Idempotency-Key was already used with a different request body/);

    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM calls WHERE organization_id = $1', [org.member.org.id]);
    assert.equal(rows[0].n, 2, "the command line's call and the API caller's");
    const delivered = await settled(t, hook.id, 2);
    assert.deepEqual(delivered.map((d) => d.call_id).sort(), [JSON.parse(first.stdout).id, viaApi.json().id].sort());
  });

  test('bad arguments exit non-zero with one line on stderr', async () => {
    const org = await connectPlatform(t);
    const cases: [string[], RegExp][] = [
      [['call', 'complete', '--summary', 'x', '--duration', '1'], /--org is required/],
      [['call', 'complete', '--org', org.member.org.id, '--duration', '1'], /--summary is required/],
      [['call', 'complete', '--org', org.member.org.id, '--summary', 'x', '--duration', '1.5'], /--duration/],
      [['call', 'complete', '--org', org.member.org.id, '--summary', 'x', '--duration', '-3'], /--duration/],
      [['call', 'complete', '--org', 'nope', '--summary', 'x', '--duration', '1'], /--org must be a UUID/],
      [['call', 'complete', '--org', '00000000-0000-4000-8000-000000000000', '--summary', 'x', '--duration', '1'], /does not exist/],
      [
        [
          'call',
          'complete',
          '--org',
          org.member.org.id,
          '--summary',
          'x',
          '--duration',
          '1',
          '--agent',
          '00000000-0000-4000-8000-000000000000',
        ],
        /--agent/,
      ],
      [
        ['call', 'complete', '--org', org.member.org.id, '--summary', 'x', '--duration', '1', '--idempotency-key', ' padded'],
        /--idempotency-key must be 1 to 255 printable ASCII/,
      ],
      [
        ['call', 'complete', '--org', org.member.org.id, '--summary', 'x', '--duration', '1', '--idempotency-key', 'k'.repeat(256)],
        /--idempotency-key must be 1 to 255/,
      ],
      [['agent', 'create', '--org', org.member.org.id], /--name is required/],
      [['agent', 'create', '--org', org.member.org.id, '--name', '   '], /--name/],
    ];
    const runs = await Promise.all(cases.map(([args]) => cli(...args, '--json')));
    for (const [index, [args, message]] of cases.entries()) {
      const run = runs[index]!;
      assert.notEqual(run.code, 0, args.join(' '));
      assert.equal(run.stdout, '', args.join(' '));
      assert.match(run.stderr, message, args.join(' '));
      assert.equal(run.stderr.trim().split('\n').length, 1, args.join(' '));
    }
  });
});
