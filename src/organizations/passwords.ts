// argon2id with the library's defaults (OWASP-recommended parameters).
import { hash, verify } from '@node-rs/argon2';

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

// A real hash to verify against when the email is unknown, so that a wrong
// email costs the same time as a wrong password and the two are indistinguishable.
let decoy: Promise<string> | undefined;

export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  if (passwordHash === undefined) {
    decoy ??= hash('decoy-password-for-unknown-users');
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  return verify(passwordHash, password).catch(() => false);
}
