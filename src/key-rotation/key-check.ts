// At start, a process that delivers webhooks looks at which key opens each
// sealed value, so a changed SECRET_KEY or a lost DATA_DIR/secret.key is one
// clear line at once rather than signed deliveries failing one by one, and
// an operator sees when SECRET_KEY_PREVIOUS is no longer needed.
import type { Logger } from 'pino';
import type { KeyRing } from '../crypto/key-ring.ts';
import type { Pool } from '../db/pool.ts';
import type { Task } from '../tasks/task.ts';
import { surveyKeyUse, total } from './rekey.ts';

/** Runs once, at start; stop() cuts the survey short. */
export function keyCheckTask({ pool, keys, log }: { pool: Pool; keys: KeyRing; log: Logger }): Task {
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  const check = () =>
    surveyKeyUse(pool, keys, stopping.signal).then(
      (use) => {
        if (stopping.signal.aborted) return;
        const unreadable = total(use.unreadable);
        const previous = total(use.previous);
        if (unreadable > 0) {
          log.error(
            { unreadable: use.unreadable },
            `${unreadable} sealed values open under neither SECRET_KEY nor SECRET_KEY_PREVIOUS (was SECRET_KEY changed, or DATA_DIR/secret.key lost?): ` +
              'signed deliveries of those webhook subscriptions fail until the key they were sealed under is in SECRET_KEY_PREVIOUS ' +
              '(docs/operations.md, "Rotating SECRET_KEY")',
          );
        }
        if (previous > 0) {
          log.info(
            { previous: use.previous },
            `${previous} sealed values are still under a key of SECRET_KEY_PREVIOUS: run "switchboard rekey"`,
          );
        } else if (keys.previous.length > 0 && unreadable === 0) {
          log.info('no sealed value needs SECRET_KEY_PREVIOUS any more');
        }
      },
      (error: unknown) => {
        if (!stopping.signal.aborted) log.warn({ err: error }, 'could not check which keys the sealed values are under');
      },
    );
  return {
    name: 'key-check',
    async start() {
      if (!stopping.signal.aborted) running ??= check();
    },
    async stop() {
      stopping.abort();
      await running;
    },
    wake() {},
  };
}
