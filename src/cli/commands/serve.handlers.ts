// What `switchboard serve` and `switchboard worker` do, declared in serve.ts and loaded only
// when one of them runs (command.ts, handler): the server, and with it every capability.
import { runUntilSignalled } from '../../server.ts';
import type { CommandContext } from '../context.ts';

export async function serve(ctx: CommandContext) {
  return runUntilSignalled(ctx.config, { http: true, workers: ctx.flags['no-worker'] !== true });
}

export async function worker(ctx: CommandContext) {
  return runUntilSignalled(ctx.config, { http: false, workers: true });
}
