// What the `switchboard rekey` command does, declared in rekey.ts and loaded only when
// it runs (command.ts, handler).
import { resolveKeyRing } from '../../config/secret-key.ts';
import { rekey as rekeyAll, total } from '../../key-rotation/rekey.ts';
import { output, withDatabase, type CommandContext } from '../context.ts';

export async function rekey(ctx: CommandContext) {
  const keys = await resolveKeyRing(ctx.config);
  const report = await withDatabase(ctx.config, (pool) => rekeyAll(pool, keys));
  const unreadable = total(report.unreadable);
  const counts = Object.entries(report.rekeyed)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
  if (unreadable > 0) {
    const which = Object.entries(report.unreadable)
      .filter(([, n]) => n > 0)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ');
    throw new Error(
      `${unreadable} sealed values open under neither SECRET_KEY nor SECRET_KEY_PREVIOUS (${which}) and were left as they are; ` +
        `add the key they were sealed under to SECRET_KEY_PREVIOUS and run rekey again (re-encrypted: ${counts}; already current: ${report.alreadyCurrent})`,
    );
  }
  output(
    ctx,
    { rekeyed: report.rekeyed, already_current: report.alreadyCurrent },
    [
      `re-encrypted under SECRET_KEY: ${counts}`,
      `already current: ${report.alreadyCurrent}`,
      keys.previous.length > 0 ? 'every sealed value is under SECRET_KEY: SECRET_KEY_PREVIOUS can be removed' : '',
    ]
      .filter(Boolean)
      .join('\n'),
  );
}
