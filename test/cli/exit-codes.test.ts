// The CLI's exit status, exactly (switchboard --help): 2 for a usage error
// (a command, option or argument it does not take, a flag missing or with a
// value it refuses, naming a user, organization or client that does not
// exist), 78 for a bad configuration, 1 for anything else; always
// one line on stderr and nothing on stdout. Scripts branch on these numbers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rm } from 'node:fs/promises';
import { baseEnv, runCli, tempDataDir } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const NO_ORG = '00000000-0000-0000-0000-000000000000';

describe('exit status of the CLI', () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    db = await createTestDatabase();
    env = baseEnv({ DATABASE_URL: db.url });
  });
  after(() => db.drop());

  const expectExit = async (args: string[], code: number, withEnv: NodeJS.ProcessEnv = env) => {
    const result = await runCli([...args, '--json'], withEnv);
    const what = `switchboard ${args.join(' ')}: ${result.stderr}`;
    assert.equal(result.code, code, what);
    assert.equal(result.stdout, '', what);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, what);
    assert.match(result.stderr, /^switchboard: /, what);
  };

  const usage: [string, string[]][] = [
    ['an unknown command', ['frobnicate']],
    ['an unknown subcommand', ['org', 'frobnicate']],
    ['an unknown option', ['org', 'create', '--colour', 'red']],
    ['an argument the command does not take', ['org', 'list', 'extra']],
    ['a required flag missing', ['org', 'create']],
    ['a required argument missing', ['client', 'delete']],
    ['a flag value that is not a UUID', ['user', 'create', '--email', 'x@example.com', '--password', 'password123', '--org', 'nope']],
    [
      'a role that does not exist',
      ['user', 'create', '--email', 'x@example.com', '--password', 'password123', '--org', NO_ORG, '--role', 'king'],
    ],
    ['a password too short', ['user', 'create', '--email', 'x@example.com', '--password', 'short', '--org', NO_ORG]],
    ['a duration that is not a number', ['call', 'complete', '--org', NO_ORG, '--summary', 'x', '--duration', 'abc']],
    ['a redirect URI that is not https', ['client', 'create', '--name', 'X', '--redirect-uri', 'http://evil.example/cb']],
    [
      'a scope that does not exist',
      ['client', 'create', '--name', 'X', '--redirect-uri', 'https://ok.example/cb', '--scopes', 'calls:read admin'],
    ],
    ['a user that does not exist', ['user-token', 'create', '--email', 'ghost@example.com']],
    ['a client that does not exist', ['client', 'delete', 'no-such-client']],
    ['an organization that does not exist', ['call', 'complete', '--org', NO_ORG, '--summary', 'x', '--duration', '1']],
  ];
  for (const [what, args] of usage) {
    test(`a usage error exits 2: ${what}`, () => expectExit(args, 2));
  }

  const configuration: [string, Record<string, string>][] = [
    ['PORT not a number', { PORT: 'abc' }],
    ['LOG_LEVEL not a level', { LOG_LEVEL: 'loud' }],
    ['WEBHOOK_RETRY_SCHEDULE not durations', { WEBHOOK_RETRY_SCHEDULE: 'soon' }],
  ];
  for (const [what, extra] of configuration) {
    test(`a bad configuration exits 78, before looking at the arguments: ${what}`, async () => {
      await expectExit(['org', 'list'], 78, { ...env, ...extra });
      await expectExit(['org', 'create'], 78, { ...env, ...extra });
    });
  }

  test('a failure that is neither exits 1: a database that does not answer, no embedded PostgreSQL running for db url', async () => {
    await expectExit(['org', 'list'], 1, { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    const dataDir = await tempDataDir();
    try {
      await expectExit(['db', 'url'], 1, baseEnv({ DATA_DIR: dataDir }));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
