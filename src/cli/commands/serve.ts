import { runUntilSignalled } from '../../server.ts';
import type { CommandContext } from '../context.ts';

export function serve(ctx: CommandContext) {
  return runUntilSignalled(ctx.config, { http: true, workers: ctx.flags['no-worker'] !== true });
}

export function worker(ctx: CommandContext) {
  return runUntilSignalled(ctx.config, { http: false, workers: true });
}
