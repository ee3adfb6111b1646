// LOG_FORMAT: how the process writes its log lines. `json` (the default) is
// pino's JSON lines on stdout, one object a line, for a log collector.
// `pretty` is for a person at a terminal: pino-pretty turns each line into
// a coloured, readable one. It reads the JSON text pino has already written,
// so everything the censor (logger.ts) hides stays hidden.

import type { LogFormat } from '../config/settings/server.ts';

/**
 * Where log lines go: undefined is pino's own stdout (JSON); pretty writes to
 * `destination` (stdout by default) and is loaded only when asked for.
 */
export async function openLogStream(format: LogFormat, destination?: NodeJS.WritableStream): Promise<NodeJS.WritableStream | undefined> {
  if (format === 'json') return undefined;
  const { default: pretty } = await import('pino-pretty');
  // sync: each line is on the terminal before the next statement runs (and before an exit).
  return pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', ...(destination ? { destination } : {}) });
}
