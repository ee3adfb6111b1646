// The text of `switchboard --help`, `switchboard <group> --help` and
// `switchboard <command> --help`, read from the commands' declarations.
import { plain } from '../config/kinds.ts';
import { SETTINGS } from '../config/settings/index.ts';
import { GLOBAL_OPTIONS, usageLine, type Command, type CommandOption } from './command.ts';

/** Lines of help are wrapped to this many characters, a terminal's usual width. */
const WIDTH = 100;

/** The text in lines of at most `width` characters (a longer word keeps its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

/** Two columns: each term padded to the widest, then its text, wrapped under itself. */
function columns(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([term]) => term.length));
  const indent = ' '.repeat(width + 4);
  return rows.flatMap(([term, text]) =>
    wrap(text, WIDTH - indent.length).map((line, index) => (index === 0 ? `  ${term.padEnd(width)}  ${line}` : `${indent}${line}`)),
  );
}

function optionTerm(option: CommandOption): string {
  const short = option.name === 'help' ? '-h, ' : '';
  return `${short}--${option.name}${option.value ? ` ${option.value}` : ''}`;
}

function optionText(option: CommandOption): string {
  const notes = [option.required ? 'required' : '', option.multiple ? 'repeat it for several' : ''].filter(Boolean);
  return notes.length ? `${option.description} (${notes.join('; ')})` : option.description;
}

const FOOTER =
  'Every command reads the configuration of the server from environment variables (docs/configuration.md; `switchboard serve --help` lists them, .env.example too). Errors exit non-zero with one line on stderr: 2 for a usage error, 78 for a bad configuration, 1 otherwise.';

export function programHelp(version: string, commands: readonly Command[]): string {
  return [
    `switchboard ${version}: the Switchboard server, its delivery worker and its administration`,
    '',
    'usage: switchboard <command> [options]',
    '       switchboard <command> --help     what a command does, and its options',
    '       switchboard --version            the version (a release is the git tag v<version>)',
    '',
    'Commands:',
    ...columns(commands.map((command) => [command.name, command.summary])),
    '',
    ...wrap(FOOTER, WIDTH),
  ].join('\n');
}

/** `switchboard org --help`: the commands that start with the group's word. */
export function groupHelp(group: string, commands: readonly Command[]): string {
  return [
    `usage: switchboard ${group} <command> [options]`,
    '',
    'Commands:',
    ...columns(commands.map((command) => [command.name, command.summary])),
    '',
    `\`switchboard ${group} <command> --help\` describes one of them.`,
  ].join('\n');
}

export function commandHelp(command: Command): string {
  const jsonOption = command.json ? [{ name: 'json', description: `print ${command.json} as one JSON object on stdout` }] : [];
  const options = [...(command.options ?? []), ...jsonOption, ...GLOBAL_OPTIONS.filter((option) => option.name === 'help')];
  const lines = [...wrap(`usage: switchboard ${usageLine(command)}`, WIDTH), '', ...wrap(command.summary, WIDTH)];
  if (command.description) lines.push('', ...wrap(command.description, WIDTH));
  if (command.arguments?.length) {
    lines.push('', 'Arguments:', ...columns(command.arguments.map((argument) => [argument.name, argument.description])));
  }
  lines.push('', 'Options:', ...columns(options.map((option) => [optionTerm(option), optionText(option)])));
  if (command.environment) lines.push('', ...environmentHelp());
  return lines.join('\n');
}

/** Each variable of the registry: the first sentence of its meaning, then its default. */
function environmentHelp(): string[] {
  const rows = Object.entries(SETTINGS).map(([name, declared]): [string, string] => {
    const meaning = plain(declared.meaning).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const sentence = firstSentence(meaning);
    const fallback = plain(declared.defaultText ?? declared.default ?? 'unset');
    return [name, `${sentence} Default: ${fallback}.`];
  });
  return ['Environment (docs/configuration.md says what each one accepts):', ...columns(rows)];
}

/** Up to the first `.`, `;` or `:` outside brackets that ends a clause (not "e.g."). */
function firstSentence(text: string): string {
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (depth === 0 && '.;:'.includes(char) && (index + 1 === text.length || text[index + 1] === ' ')) {
      if (!text.slice(0, index + 1).endsWith('e.g.')) return `${text.slice(0, index)}.`;
    }
  }
  return text;
}
