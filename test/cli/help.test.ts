// `switchboard --help` lists every command, and `switchboard <command> --help`
// describes one with each of its options, from the real executable. Help needs
// neither a database nor a valid configuration.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { COMMANDS } from '../../src/cli/commands/index.ts';
import { baseEnv, runCli } from '../helpers/cli.ts';

// A configuration that would stop any command that reads it: help must not.
const env = baseEnv({ PORT: 'abc', DATA_DIR: '/nonexistent/switchboard-help' });

describe('switchboard --help', () => {
  test('lists every command with a line on what it does, and exits 0', async () => {
    const result = await runCli(['--help'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /^usage: switchboard <command>/m);
    for (const name of ['serve', 'worker', 'migrate', 'org create', 'user-token create', 'client rotate-secret', 'call complete', 'demo']) {
      assert.match(result.stdout, new RegExp(`^  ${name} +\\S`, 'm'), `${name} is listed with its summary`);
    }
    for (const command of COMMANDS) assert.ok(result.stdout.includes(`  ${command.name} `), `${command.name} is listed`);
    assert.match(result.stdout, /switchboard <command> --help/);
    assert.equal(Math.max(...result.stdout.split('\n').map((line) => line.length)) <= 100, true, 'fits a terminal');
  });

  test('each command describes itself and every option it takes', async () => {
    const answers = await Promise.all(COMMANDS.map((command) => runCli([...command.name.split(' '), '--help'], env)));
    COMMANDS.forEach((command, index) => {
      const { code, stdout, stderr } = answers[index]!;
      assert.equal(code, 0, `${command.name} --help: ${stderr}`);
      assert.ok(stdout.startsWith(`usage: switchboard ${command.name}`), stdout);
      assert.ok(stdout.includes(command.summary), stdout);
      for (const option of command.options ?? []) {
        assert.match(stdout, new RegExp(`^  --${option.name}\\b.*\\S`, 'm'), `${command.name}: --${option.name} is described`);
      }
      if (command.json) assert.match(stdout, /^ {2}--json +print /m);
      assert.match(stdout, /^ {2}-h, --help/m);
      assert.equal(Math.max(...stdout.split('\n').map((line) => line.length)) <= 100, true, `${command.name} --help fits a terminal`);
    });
  });

  test('call complete --help names its options and their values', async () => {
    const { code, stdout } = await runCli(['call', 'complete', '--help'], env);
    assert.equal(code, 0);
    assert.match(stdout, /^usage: switchboard call complete --org ORG_ID --summary S --duration SECONDS \[--agent AGENT_ID\]/);
    assert.match(stdout, /^ {2}--duration SECONDS +its length in whole seconds \(required\)$/m);
    assert.match(stdout, /^ {2}--idempotency-key KEY +as POST \/calls' Idempotency-Key/m);
    const serve = await runCli(['help', 'serve'], env);
    assert.equal(serve.code, 0);
    assert.match(serve.stdout, /^ {2}--no-worker +serve HTTP only/m);
  });

  test('a group word lists its commands; alone, it is a usage error that says so', async () => {
    const help = await runCli(['client', '--help'], env);
    assert.equal(help.code, 0);
    for (const verb of ['create', 'list', 'delete', 'rotate-secret']) assert.match(help.stdout, new RegExp(`^  client ${verb} +\\S`, 'm'));
    const alone = await runCli(['client'], env);
    assert.equal(alone.code, 2);
    assert.equal(alone.stderr, 'switchboard: "client" needs one of create, list, delete, rotate-secret; run switchboard client --help\n');
  });

  test("another command's option or a word too many is refused before any work, naming it", async () => {
    const option = await runCli(['org', 'list', '--summary', 'x'], env);
    assert.equal(option.code, 2);
    assert.equal(option.stderr, 'switchboard: --summary is not an option of "org list"; run switchboard org list --help\n');
    const word = await runCli(['org', 'deactivate', '00000000-0000-0000-0000-000000000000', 'extra'], env);
    assert.equal(word.code, 2);
    assert.match(word.stderr, /^switchboard: unexpected argument "extra" to "org deactivate"/);
  });

  test('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const result = await runCli(['--version'], env);
    assert.equal(result.code, 0);
    assert.equal(result.stdout, `${version}\n`);
  });
});
