// What a command of the `switchboard` executable declares: its words, what it
// does, its arguments and options, and where its handler is. The parser, the
// usage line and `--help` are all read from these declarations, so a new
// command (its declaration in commands/<group>.ts, its handler in
// commands/<group>.handlers.ts, one line in commands/index.ts) is documented
// and parsed the moment it exists.
import type { CommandContext } from './context.ts';

export interface CommandOption {
  /** The long name without dashes: `name` for `--name`. */
  name: string;
  /** The value's placeholder (`N`, `URI`); absent for a switch that takes no value. */
  value?: string;
  required?: boolean;
  /** May be given more than once (each value is kept). */
  multiple?: boolean;
  description: string;
}

export interface CommandArgument {
  /** The placeholder, as the usage line shows it: `ORG_ID`. */
  name: string;
  description: string;
}

export interface Command {
  /** The words that select it: `serve`, `org create`. */
  name: string;
  /** One line for the list of commands. */
  summary: string;
  /** More sentences for its own --help, when the summary is not enough. */
  description?: string;
  arguments?: readonly CommandArgument[];
  options?: readonly CommandOption[];
  /** Its --help lists the environment variables (the long-running commands, which read them all). */
  environment?: boolean;
  /** What `--json` prints; absent for the long-running commands, which print log lines. */
  json?: string;
  run(ctx: CommandContext): Promise<void>;
}

/** Options every command takes. */
export const GLOBAL_OPTIONS: readonly CommandOption[] = [
  { name: 'json', description: 'print one JSON object on stdout and nothing else there' },
  { name: 'help', description: 'describe the command and its options' },
];

/** `org create --name N [--json]`: the command's words, its arguments, then its options (required ones bare, the rest in brackets). */
export function usageLine(command: Command): string {
  const parts = [command.name, ...(command.arguments ?? []).map((argument) => argument.name)];
  for (const option of command.options ?? []) {
    const text = `--${option.name}${option.value ? ` ${option.value}` : ''}${option.multiple ? '…' : ''}`;
    parts.push(option.required ? text : `[${text}]`);
  }
  if (command.json) parts.push('[--json]');
  return parts.join(' ');
}

/**
 * A command's handler, loaded when that command runs: the declarations (for
 * the parser and --help) import nothing else, so `--help` loads no service
 * and each command loads only its own (all of them took about half a second
 * of CPU at every start).
 */
export function handler<K extends string>(load: () => Promise<Record<K, Command['run']>>, name: K): Command['run'] {
  return async (ctx) => (await load())[name](ctx);
}
