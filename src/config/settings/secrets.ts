import { ConfigError } from '../config-error.ts';
import type { Kind } from '../kinds.ts';
import { setting } from '../setting.ts';

/** 32 bytes in base64, or undefined. */
function base64Key(raw: string): Buffer | undefined {
  const key = Buffer.from(raw, 'base64');
  return key.length === 32 ? key : undefined;
}

/** The message never repeats a key. */
const key: Kind<Buffer> = {
  accepts: '32 bytes encoded as base64 (`openssl rand -base64 32`)',
  parse(raw, name) {
    const parsed = base64Key(raw);
    if (!parsed) throw new ConfigError(name, 'must be 32 bytes encoded as base64');
    return parsed;
  },
};

const keyList: Kind<Buffer[]> = {
  accepts: 'keys like `SECRET_KEY`, separated by commas, newest first',
  parse(raw, name) {
    const items = raw.split(',');
    return items.map((item, index) => {
      const parsed = base64Key(item.trim());
      if (!parsed) {
        throw new ConfigError(
          name,
          `key ${index + 1} of ${items.length} is not 32 bytes encoded as base64 (a comma-separated list of keys like SECRET_KEY)`,
        );
      }
      return parsed;
    });
  },
};

export const SECRETS = {
  SECRET_KEY: setting({
    kind: key,
    default: undefined,
    defaultText: 'generated into `DATA_DIR`',
    meaning:
      'Encrypts webhook secrets and the token answers kept for a retried refresh, keys the CSRF tokens. Every process of a deployment needs the same one. Back it up: without it, signed subscriptions fail ([Rotating `SECRET_KEY`](operations.md#rotating-secret_key)).',
  }),
  SECRET_KEY_PREVIOUS: setting({
    kind: keyList,
    default: undefined,
    defaultText: 'unset',
    meaning:
      'Older keys: what they encrypted still opens and their CSRF tokens still verify; nothing new uses them. Set during a rotation, until `switchboard rekey` has run.',
  }),
};
