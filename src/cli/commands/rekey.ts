// switchboard rekey (docs/interface.md §16): seals every value an older key
// (SECRET_KEY_PREVIOUS) sealed under SECRET_KEY again; after it, the old key
// can go. Safe beside running processes, and to run twice.
import { resolveKeyRing } from '../../config/secret-key.ts';
import { rekey as rekeyAll, total } from '../../key-rotation/rekey.ts';
import type { Command } from '../command.ts';
import { output, withDatabase, type CommandContext } from '../context.ts';

export const rekeyCommand: Command = {
  name: 'rekey',
  summary: 'Re-encrypt under SECRET_KEY what the keys of SECRET_KEY_PREVIOUS sealed (key rotation)',
  description:
    'The third step of rotating SECRET_KEY (docs/operations.md, "Rotating SECRET_KEY"): run it once every process has the new SECRET_KEY ' +
    'and the old key in SECRET_KEY_PREVIOUS; then SECRET_KEY_PREVIOUS can go. Safe while the service runs, and to run again. ' +
    'Values no key opens are left as they are, and it exits 1 naming how many.',
  json: '{rekeyed: {webhook_secrets, refresh_token_successors}, already_current}',
  run: rekey,
};

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
