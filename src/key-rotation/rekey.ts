// `switchboard rekey` and the start-up check read every sealed value the same
// way: in id order, a batch at a time, each opened with the key ring
// (SECRET_KEY first, then SECRET_KEY_PREVIOUS). Rekeying seals what an older
// key opened under SECRET_KEY again, with a compare-and-set, so it is safe
// while the service runs (a value rewritten meanwhile is looked at again, one
// deleted meanwhile is left gone) and a second run finds nothing to do.
import type { KeyRing } from '../crypto/key-ring.ts';
import { createSecretBox, type SecretBox, type SecretPurpose, UnreadableSealError } from '../crypto/secret-box.ts';
import type { Pool } from '../db/pool.ts';
import {
  listSealedValues,
  readSealedValue,
  replaceSealedValue,
  SEALED_KINDS,
  type SealedKind,
  type SealedValue,
} from './sealed-values.queries.ts';

const BATCH = 500;

const PURPOSE: Record<SealedKind, SecretPurpose> = {
  webhook_secrets: 'webhook-secret',
  refresh_token_successors: 'refresh-token',
};

export type PerKind = Record<SealedKind, number>;

const zero = (): PerKind => ({ webhook_secrets: 0, refresh_token_successors: 0 });

/** Every sealed value of `kind`, in id order, a batch at a time (until `signal` aborts). */
async function* sealedValues(pool: Pool, kind: SealedKind, signal?: AbortSignal): AsyncGenerator<SealedValue> {
  let after: string | null = null;
  while (!signal?.aborted) {
    const batch = await listSealedValues(pool, kind, after, BATCH);
    yield* batch;
    if (batch.length < BATCH) return;
    after = batch[batch.length - 1]!.id;
  }
}

export interface RekeyReport {
  /** Sealed again under SECRET_KEY, per kind. */
  rekeyed: PerKind;
  /** Already sealed under SECRET_KEY (or rewritten under it while the command ran). */
  alreadyCurrent: number;
  /** Opened under no key of the ring: left as they are. */
  unreadable: PerKind;
}

type Outcome = 'rekeyed' | 'current' | 'unreadable' | 'gone';

async function rekeyOne(pool: Pool, box: SecretBox, kind: SealedKind, value: SealedValue): Promise<Outcome> {
  let stored: SealedValue | undefined = value;
  while (stored) {
    let replacement: Buffer | undefined;
    try {
      replacement = box.reseal(stored.sealed, stored.context);
    } catch (error) {
      if (error instanceof UnreadableSealError) return 'unreadable';
      throw error;
    }
    if (!replacement) return 'current';
    if (await replaceSealedValue(pool, kind, stored.id, stored.sealed, replacement)) return 'rekeyed';
    // Written or cleared since it was read: look at what is there now.
    stored = await readSealedValue(pool, kind, stored.id);
  }
  return 'gone';
}

/** Seals every value an older key opens under SECRET_KEY again. */
export async function rekey(pool: Pool, keys: KeyRing): Promise<RekeyReport> {
  const report: RekeyReport = { rekeyed: zero(), alreadyCurrent: 0, unreadable: zero() };
  for (const kind of SEALED_KINDS) {
    const box = createSecretBox(keys, PURPOSE[kind]);
    for await (const value of sealedValues(pool, kind)) {
      const outcome = await rekeyOne(pool, box, kind, value);
      if (outcome === 'rekeyed') report.rekeyed[kind]++;
      else if (outcome === 'current') report.alreadyCurrent++;
      else if (outcome === 'unreadable') report.unreadable[kind]++;
    }
  }
  return report;
}

export interface KeyUse {
  /** Sealed under a key of SECRET_KEY_PREVIOUS: `switchboard rekey` moves them to SECRET_KEY. */
  previous: PerKind;
  /** Opened under no key of the ring. */
  unreadable: PerKind;
}

/** Which key opens each sealed value; nothing is written. */
export async function surveyKeyUse(pool: Pool, keys: KeyRing, signal?: AbortSignal): Promise<KeyUse> {
  const use: KeyUse = { previous: zero(), unreadable: zero() };
  for (const kind of SEALED_KINDS) {
    const box = createSecretBox(keys, PURPOSE[kind]);
    for await (const value of sealedValues(pool, kind, signal)) {
      try {
        if (!box.isCurrent(value.sealed, value.context)) use.previous[kind]++;
      } catch (error) {
        if (!(error instanceof UnreadableSealError)) throw error;
        use.unreadable[kind]++;
      }
    }
  }
  return use;
}

export const total = (counts: PerKind): number => Object.values(counts).reduce((sum, n) => sum + n, 0);
