// SECRET_KEY keys the secret boxes and the CSRF tokens (src/crypto, made once
// per process by buildKeyed in app.ts). Without one, the key is generated once
// into DATA_DIR (mode 0600), so every process sharing that directory (serve,
// worker, CLI) uses the same key. Losing that file loses every webhook secret
// sealed under it (README: what to back up).
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { keyRing, type KeyRing } from '../crypto/key-ring.ts';
import type { Config } from './config.ts';

/** SECRET_KEY (or DATA_DIR's key) and SECRET_KEY_PREVIOUS. */
export async function resolveKeyRing(config: Config): Promise<KeyRing> {
  return keyRing(await resolveSecretKey(config), config.secretKeyPrevious);
}

export async function resolveSecretKey(config: Config): Promise<Buffer> {
  if (config.secretKey) return config.secretKey;
  const file = path.join(config.dataDir, 'secret.key');
  await mkdir(config.dataDir, { recursive: true });
  try {
    // 'wx' fails when another process won the race; then we read its key.
    await writeFile(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
  return key;
}
