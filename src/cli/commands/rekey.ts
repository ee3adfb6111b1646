// switchboard rekey (docs/interface.md §16): seals every value an older key
// (SECRET_KEY_PREVIOUS) sealed under SECRET_KEY again; after it, the old key
// can go. Safe beside running processes, and to run twice.
import { handler, type Command } from '../command.ts';

export const rekeyCommand: Command = {
  name: 'rekey',
  summary: 'Re-encrypt under SECRET_KEY what the keys of SECRET_KEY_PREVIOUS sealed (key rotation)',
  description:
    'The third step of rotating SECRET_KEY (docs/operations.md, "Rotating SECRET_KEY"): run it once every process has the new SECRET_KEY ' +
    'and the old key in SECRET_KEY_PREVIOUS; then SECRET_KEY_PREVIOUS can go. Safe while the service runs, and to run again. ' +
    'Values no key opens are left as they are, and it exits 1 naming how many.',
  json: '{rekeyed: {webhook_secrets, refresh_token_successors}, already_current}',
  run: handler(() => import('./rekey.handlers.ts'), 'rekey'),
};
