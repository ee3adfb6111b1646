// switchboard CLI entry point (docs/interface.md §16). Every command reads the same
// environment configuration as the server; --json prints one JSON object on
// stdout; any error exits non-zero with one line on stderr.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config.ts';
import { COMMANDS } from './commands/index.ts';
import { UsageError } from './context.ts';

const OPTIONS = {
  json: { type: 'boolean' },
  'no-worker': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  org: { type: 'string' },
  role: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  scopes: { type: 'string' },
  summary: { type: 'string' },
  duration: { type: 'string' },
  agent: { type: 'string' },
  'idempotency-key': { type: 'string' },
} as const;

function usage(): string {
  return ['usage: switchboard <command> [--json]', ...Object.values(COMMANDS).map((c) => `  switchboard ${c.usage}`)].join('\n');
}

function findCommand(words: string[]): { key: string; rest: string[] } | undefined {
  const two = words.slice(0, 2).join(' ');
  if (COMMANDS[two]) return { key: two, rest: words.slice(2) };
  if (words[0] && COMMANDS[words[0]]) return { key: words[0], rest: words.slice(1) };
  return undefined;
}

export async function main(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    if (values.help || positionals.length === 0) {
      process.stdout.write(`${usage()}\n`);
      return positionals.length === 0 && !values.help ? 2 : 0;
    }
    const found = findCommand(positionals);
    if (!found) throw new UsageError(`unknown command "${positionals.join(' ')}"; run switchboard --help`);
    const config = loadConfig(process.env);
    await COMMANDS[found.key]!.run({ config, json: values.json === true, flags: values, positionals: found.rest });
    return 0;
  } catch (error) {
    const message =
      error instanceof ConfigError || error instanceof UsageError
        ? error.message
        : (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
            (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
          ? (error as Error).message
          : `error: ${(error as Error).message}`;
    process.stderr.write(`switchboard: ${message.split('\n')[0]}\n`);
    return error instanceof ConfigError
      ? 78
      : error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
        ? 2
        : 1;
  }
}
