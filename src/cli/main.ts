// switchboard CLI entry point (docs/interface.md §16). Every command reads the same
// environment configuration as the server; --json prints one JSON object on
// stdout; any error exits non-zero with one line on stderr. What each command
// accepts is what it declares (commands/index.ts); --help prints it.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig } from '../config/config.ts';
import { DatabaseUnreachableError } from '../db/database-unreachable.ts';
import { VERSION } from '../version.ts';
import { GLOBAL_OPTIONS, type Command, type CommandOption } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { UsageError, type CommandContext } from './context.ts';
import { commandHelp, groupHelp, programHelp } from './help.ts';

type ParseOptions = NonNullable<ParseArgsConfig['options']>;

/**
 * Every command's options in one parser table, so that a value is told from a
 * command word before the command is known; each command then accepts only
 * its own. One name means one kind of value in every command.
 */
function parserOptions(commands: readonly Command[]): ParseOptions {
  const table: ParseOptions = { version: { type: 'boolean' } };
  const all: CommandOption[] = [...GLOBAL_OPTIONS, ...commands.flatMap((command) => command.options ?? [])];
  for (const option of all) {
    const entry = {
      type: option.value ? 'string' : 'boolean',
      multiple: option.multiple === true,
      ...(option.name === 'help' ? { short: 'h' } : {}),
    } as const;
    const seen = table[option.name];
    if (seen && (seen.type !== entry.type || (seen.multiple ?? false) !== entry.multiple)) {
      throw new Error(`CLI option --${option.name} is declared with two different kinds of value`);
    }
    table[option.name] = entry;
  }
  return table;
}

const OPTIONS = parserOptions(COMMANDS);

function findCommand(words: string[]): { command: Command; rest: string[] } | undefined {
  for (const length of [2, 1]) {
    const name = words.slice(0, length).join(' ');
    const command = words.length >= length ? COMMANDS.find((candidate) => candidate.name === name) : undefined;
    if (command) return { command, rest: words.slice(length) };
  }
  return undefined;
}

/** The commands of a group word (`org` → org create, org list, …). */
function groupOf(word: string | undefined): Command[] {
  return word ? COMMANDS.filter((command) => command.name.startsWith(`${word} `)) : [];
}

/** Refuses what the command does not declare: another command's option, or a word too many. */
function checkArguments(command: Command, values: Record<string, unknown>, rest: string[]): void {
  const accepted = new Set([...GLOBAL_OPTIONS, ...(command.options ?? [])].map((option) => option.name));
  for (const name of Object.keys(values)) {
    if (!accepted.has(name))
      throw new UsageError(`--${name} is not an option of "${command.name}"; run switchboard ${command.name} --help`);
  }
  const expected = command.arguments?.length ?? 0;
  if (rest.length > expected) {
    throw new UsageError(`unexpected argument "${rest[expected]}" to "${command.name}"; run switchboard ${command.name} --help`);
  }
}

export async function main(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    // `switchboard help org create` is `switchboard org create --help`.
    const help = values.help === true || positionals[0] === 'help';
    const words = positionals[0] === 'help' ? positionals.slice(1) : positionals;
    if (values.version === true) {
      process.stdout.write(`${VERSION}\n`);
      return 0;
    }
    if (words.length === 0) {
      process.stdout.write(`${programHelp(VERSION, COMMANDS)}\n`);
      return help ? 0 : 2;
    }
    const found = findCommand(words);
    if (!found) {
      const group = groupOf(words[0]);
      if (group.length && words.length === 1) {
        if (help) {
          process.stdout.write(`${groupHelp(words[0]!, group)}\n`);
          return 0;
        }
        const verbs = group.map((command) => command.name.split(' ')[1]).join(', ');
        throw new UsageError(`"${words[0]}" needs one of ${verbs}; run switchboard ${words[0]} --help`);
      }
      throw new UsageError(`unknown command "${words.join(' ')}"; run switchboard --help`);
    }
    if (help) {
      process.stdout.write(`${commandHelp(found.command)}\n`);
      return 0;
    }
    checkArguments(found.command, values, found.rest);
    const config = loadConfig(process.env);
    const flags = values as CommandContext['flags'];
    await found.command.run({ config, json: values.json === true, flags, positionals: found.rest });
    return 0;
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message =
      error instanceof ConfigError ||
      error instanceof UsageError ||
      error instanceof DatabaseUnreachableError ||
      code?.startsWith('ERR_PARSE_ARGS')
        ? (error as Error).message
        : `error: ${(error as Error).message}`;
    process.stderr.write(`switchboard: ${message.split('\n')[0]}\n`);
    return error instanceof ConfigError ? 78 : error instanceof UsageError || code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1;
  }
}
