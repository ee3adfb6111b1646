import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { baseEnv, cliJson, runCli } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { authenticate } from '../../src/auth/sessions.service.ts';
import { recentCalls } from '../helpers/calls.ts';
import { authenticateClient } from '../../src/oauth/clients.service.ts';
import { NO_CACHES } from '../../src/cache/caches.ts';

describe('switchboard CLI', () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    db = await createTestDatabase();
    env = baseEnv({ DATABASE_URL: db.url });
  });
  after(() => db.drop());

  test('org, user and user-token commands print the JSON of docs/interface.md §16', async () => {
    const org = await cliJson(['org', 'create', '--name', 'Acme'], env);
    assert.deepEqual(Object.keys(org).sort(), ['id', 'name']);
    assert.equal(org.name, 'Acme');

    const user = await cliJson(
      [
        'user',
        'create',
        '--email',
        'ada@example.com',
        '--password',
        'password123',
        '--org',
        String(org.id),
        '--name',
        'Ada',
        '--role',
        'admin',
      ],
      env,
    );
    assert.deepEqual(Object.keys(user).sort(), ['email', 'id']);
    assert.equal(user.email, 'ada@example.com');

    const token = await cliJson(['user-token', 'create', '--email', 'ada@example.com', '--org', String(org.id)], env);
    assert.deepEqual(Object.keys(token).sort(), ['expires_at', 'token']);
    assert.match(String(token.token), /^sbu_/);

    const orgs = await cliJson<{ organizations: { id: string; active: boolean }[] }>(['org', 'list'], env);
    assert.ok(orgs.organizations.some((o) => o.id === org.id && o.active));
    const users = await cliJson<{ users: { email: string; role: string }[] }>(['user', 'list', '--org', String(org.id)], env);
    assert.deepEqual(
      users.users.map((u) => [u.email, u.role]),
      [['ada@example.com', 'admin']],
    );

    assert.deepEqual(await cliJson(['user', 'deactivate', '--email', 'ada@example.com'], env), { id: user.id, active: false });
    assert.deepEqual(await cliJson(['org', 'deactivate', String(org.id)], env), { id: org.id, active: false });
  });

  test('demo seeds an organization, a user who can log in, an agent, an OAuth client and completed calls', async () => {
    const seeded = await cliJson<{
      organization: { id: string };
      user: { email: string; password: string };
      user_token: string;
      agent: { id: string };
      client: { client_id: string; client_secret: string; redirect_uris: string[] };
      calls: { id: string; agent_id: string }[];
    }>(['demo'], env);
    assert.deepEqual(Object.keys(seeded).sort(), ['agent', 'calls', 'client', 'organization', 'user', 'user_token']);
    const user = await authenticate(db.pool, seeded.user.email, seeded.user.password);
    assert.ok(user.id);
    assert.ok(await authenticateClient(db.pool, NO_CACHES, seeded.client.client_id, seeded.client.client_secret));
    assert.equal(seeded.calls.length, 3);
    assert.ok(seeded.calls.every((call) => call.agent_id === seeded.agent.id));
    const recent = await recentCalls(db.pool, seeded.organization.id, 10);
    assert.deepEqual(recent.map((c) => c.id).sort(), seeded.calls.map((c) => c.id).sort());
  });

  test('user create on an existing email adds the membership and says so', async () => {
    const first = await cliJson<{ id: string }>(['org', 'create', '--name', 'First'], env);
    const second = await cliJson<{ id: string }>(['org', 'create', '--name', 'Second'], env);
    const made = await runCli(['user', 'create', '--email', 'twice@example.com', '--password', 'password123', '--org', first.id], env);
    assert.match(made.stdout, /^created user /);
    const joined = await runCli(['user', 'create', '--email', 'twice@example.com', '--password', 'password123', '--org', second.id], env);
    assert.equal(joined.code, 0);
    assert.match(joined.stdout, new RegExp(`^added existing user .* to organization ${second.id} as member`));
    const wrong = await runCli(
      ['user', 'create', '--email', 'twice@example.com', '--password', 'another-password', '--org', second.id],
      env,
    );
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /already exists with a different password/);
  });

  test('migrate reports what it applied', async () => {
    assert.deepEqual(await cliJson(['migrate'], env), { applied: [] });
  });

  const bad: [string, string[], RegExp][] = [
    ['unknown command', ['frobnicate'], /unknown command/],
    ['unknown option', ['org', 'create', '--colour', 'red'], /colour/],
    ['missing --name', ['org', 'create'], /--name is required/],
    ['bad org id', ['user', 'create', '--email', 'x@example.com', '--password', 'password123', '--org', 'nope'], /--org must be a UUID/],
    [
      'short password',
      ['user', 'create', '--email', 'x@example.com', '--password', 'short', '--org', '00000000-0000-0000-0000-000000000000'],
      /--password/,
    ],
    [
      'bad role',
      [
        'user',
        'create',
        '--email',
        'x@example.com',
        '--password',
        'password123',
        '--org',
        '00000000-0000-0000-0000-000000000000',
        '--role',
        'king',
      ],
      /--role/,
    ],
    ['unknown user', ['user-token', 'create', '--email', 'ghost@example.com'], /ghost@example.com/],
  ];
  for (const [name, args, pattern] of bad) {
    test(`bad arguments (${name}): non-zero exit and one line on stderr`, async () => {
      const result = await runCli([...args, '--json'], env);
      assert.notEqual(result.code, 0);
      assert.equal(result.stdout, '');
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0]!, pattern);
    });
  }

  test('invalid configuration stops with a message naming the variable', async () => {
    const result = await runCli(['org', 'list'], { ...env, PORT: 'abc' });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /^switchboard: PORT: /);
  });
});
