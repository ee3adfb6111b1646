// W3C Trace Context (https://www.w3.org/TR/trace-context/) without the
// OpenTelemetry SDK: what propagation needs whether or not traces are
// exported. A call keeps its context in one bytea column, compactly:
//
//   trace id (16 bytes) | parent span id (8) | trace flags (1) | tracestate (ASCII, optional)
//
// 25 bytes for a call without tracestate, against 55 for the traceparent text.
// With export off this module is all tracing costs: reading a header,
// random ids, formatting a header (docs/decisions.md, "Tracing").
import { randomFillSync } from 'node:crypto';

const TRACE_ID_BYTES = 16;
const SPAN_ID_BYTES = 8;
/** Where the flags byte is, and where tracestate starts. */
const FLAGS_AT = TRACE_ID_BYTES + SPAN_ID_BYTES;
const FIXED_BYTES = FLAGS_AT + 1;

/** The W3C limit on a tracestate header kept and passed on. */
export const TRACESTATE_MAX_LENGTH = 512;
const TRACESTATE_MAX_MEMBERS = 32;
export const SAMPLED = 0x01;

// version 00's form; a later version may append fields after a '-' (the spec's forward compatibility).
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/;
const ALL_ZERO_TRACE = '0'.repeat(32);
const ALL_ZERO_SPAN = '0'.repeat(16);
// Printable ASCII without ',' inside a member; members separated by ',' with optional spaces.
const TRACESTATE_MEMBER = /^[a-z0-9][_0-9a-z\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** A call's trace context as stored (the layout above). */
export type StoredTraceContext = Buffer;

/**
 * The stored form of a `traceparent` header (and its `tracestate`), or
 * undefined when the header is missing or malformed: as the spec says, an
 * invalid traceparent starts a new trace, it is not an error of the request.
 * A tracestate that breaks the spec's rules is dropped, the traceparent kept.
 */
export function parseTraceparent(traceparent: unknown, tracestate?: unknown): StoredTraceContext | undefined {
  if (typeof traceparent !== 'string' || traceparent.length < 55) return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string];
  if (version === 'ff' || traceId === ALL_ZERO_TRACE || spanId === ALL_ZERO_SPAN) return undefined;
  if (version === '00' && rest !== '') return undefined;
  const state = validTracestate(tracestate);
  const stored = Buffer.allocUnsafe(FIXED_BYTES + (state?.length ?? 0));
  stored.write(traceId, 0, 'hex');
  stored.write(spanId, TRACE_ID_BYTES, 'hex');
  // Only the sampled bit has a meaning in version 00; the others are passed as 0.
  stored[FLAGS_AT] = Number.parseInt(flags, 16) & SAMPLED;
  if (state) stored.write(state, FIXED_BYTES, 'latin1');
  return stored;
}

/** The tracestate header if it keeps the spec's rules (length, member count and form), else undefined. */
function validTracestate(header: unknown): string | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > TRACESTATE_MAX_LENGTH) return undefined;
  const members = trimmed.split(',').map((member) => member.trim());
  const present = members.filter((member) => member !== '');
  if (present.length > TRACESTATE_MAX_MEMBERS || !present.every((member) => TRACESTATE_MEMBER.test(member))) return undefined;
  return present.join(',');
}

/** Random bytes for ids, filled in blocks: one system call per 256 ids, not one each. */
const RANDOM_BLOCK = 256 * FIXED_BYTES;
let random = Buffer.alloc(0);
let randomAt = 0;

function randomBytes(n: number): Buffer {
  if (randomAt + n > random.length) {
    random = randomFillSync(Buffer.allocUnsafe(RANDOM_BLOCK));
    randomAt = 0;
  }
  const bytes = random.subarray(randomAt, randomAt + n);
  randomAt += n;
  // An all-zero id is invalid; its odds are nil, but the rule costs one test.
  return bytes.some((byte) => byte !== 0) ? bytes : randomBytes(n);
}

/** A new trace: random trace and span ids, sampled (what the default sampler, always on, decides). */
export function newTraceContext(): StoredTraceContext {
  const stored = Buffer.allocUnsafe(FIXED_BYTES);
  randomBytes(TRACE_ID_BYTES).copy(stored, 0);
  randomBytes(SPAN_ID_BYTES).copy(stored, TRACE_ID_BYTES);
  stored[FLAGS_AT] = SAMPLED;
  return stored;
}

/** A span id of its own (16 hex digits): an attempt's, when no SDK makes one. */
export function newSpanId(): string {
  return randomBytes(SPAN_ID_BYTES).toString('hex');
}

/** The stored form of ids the SDK made (hex), with a serialized tracestate. */
export function storeTraceContext(traceId: string, spanId: string, flags: number, tracestate?: string): StoredTraceContext {
  const state = tracestate ? validTracestate(tracestate) : undefined;
  const stored = Buffer.allocUnsafe(FIXED_BYTES + (state?.length ?? 0));
  stored.write(traceId, 0, 'hex');
  stored.write(spanId, TRACE_ID_BYTES, 'hex');
  stored[FLAGS_AT] = flags & SAMPLED;
  if (state) stored.write(state, FIXED_BYTES, 'latin1');
  return stored;
}

export interface TraceContextParts {
  traceId: string;
  spanId: string;
  flags: number;
  tracestate: string | undefined;
}

/** A stored context read back (ids in hex). */
export function readTraceContext(stored: StoredTraceContext): TraceContextParts {
  return {
    traceId: stored.toString('hex', 0, TRACE_ID_BYTES),
    spanId: stored.toString('hex', TRACE_ID_BYTES, FLAGS_AT),
    flags: stored[FLAGS_AT]! & SAMPLED,
    tracestate: stored.length > FIXED_BYTES ? stored.toString('latin1', FIXED_BYTES) : undefined,
  };
}

/** A trace id for a call stored before trace contexts were kept: its own id's 16 bytes, the same on every attempt. */
export function legacyTraceContext(callId: string): StoredTraceContext {
  const stored = Buffer.alloc(FIXED_BYTES);
  stored.write(callId.replaceAll('-', ''), 0, 'hex');
  stored.write(callId.replaceAll('-', '').slice(16), TRACE_ID_BYTES, 'hex');
  stored[FLAGS_AT] = SAMPLED;
  return stored;
}

/** The `traceparent` header of a request sent in the stored trace, `spanId` its parent (the sender's span). */
export function traceparentHeader(stored: StoredTraceContext, spanId: string): string {
  return `00-${stored.toString('hex', 0, TRACE_ID_BYTES)}-${spanId}-0${stored[FLAGS_AT]! & SAMPLED}`;
}

/** The stored tracestate, passed on as received; undefined when none came. */
export function tracestateHeader(stored: StoredTraceContext): string | undefined {
  return stored.length > FIXED_BYTES ? stored.toString('latin1', FIXED_BYTES) : undefined;
}
