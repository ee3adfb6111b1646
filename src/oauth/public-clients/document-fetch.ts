// Fetching a Client ID Metadata Document: the outbound rules of webhook
// deliveries (docs/interface.md §6.5) — https only, the port allow-list, the
// dialled address public (checked at connect time, so DNS rebinding cannot
// reach a private network), no redirects followed — within 5 s and 5 KiB.
import { Agent, request } from 'undici';
import { checkPort, checkUrlShape } from '../../ssrf/check-hook-url.ts';
import { checkedConnector } from '../../ssrf/checked-connect.ts';

export const DOCUMENT_MAX_BYTES = 5 * 1024;
export const DOCUMENT_TIMEOUT_MS = 5000;
/** The longest a fetched document is trusted, whatever its Cache-Control says. */
export const DOCUMENT_MAX_AGE_SECONDS = 86_400;
/** A document that says nothing about caching is trusted this long. */
const DEFAULT_MAX_AGE_SECONDS = 3600;

export interface FetchRules {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOWED_PORTS */
  allowedPorts: readonly number[] | '*';
}

export type FetchedDocument = { ok: true; body: unknown; maxAgeSeconds: number } | { ok: false; reason: string };

const agents = new Map<boolean, Agent>();

function agentFor(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    agent = new Agent({ connect: checkedConnector({ allowPrivate, connectTimeoutMs: DOCUMENT_TIMEOUT_MS }), allowH2: false });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

/** RFC 9111 §5.2.2: no-store/no-cache → 0; max-age otherwise; capped at a day. */
export function cacheLifetime(cacheControl: string | undefined): number {
  if (!cacheControl) return DEFAULT_MAX_AGE_SECONDS;
  const directives = cacheControl.toLowerCase();
  if (/(^|[\s,])(no-store|no-cache)\b/.test(directives)) return 0;
  const maxAge = /(?:^|[\s,])max-age\s*=\s*"?(\d+)/.exec(directives);
  if (!maxAge) return DEFAULT_MAX_AGE_SECONDS;
  return Math.min(Number(maxAge[1]), DOCUMENT_MAX_AGE_SECONDS);
}

async function readCapped(body: AsyncIterable<Buffer>): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > DOCUMENT_MAX_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function errorCode(err: unknown): string {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === 'ERR_WEBHOOK_BLOCKED_ADDRESS') return 'its host is not a public address';
    current = (current as { cause?: unknown }).cause;
  }
  return 'it could not be fetched';
}

export async function fetchClientDocument(url: string, rules: FetchRules): Promise<FetchedDocument> {
  const shape = checkUrlShape(url);
  if (!shape.ok) return { ok: false, reason: 'it is not an https URL' };
  if (!checkPort(shape.url, rules.allowedPorts).ok) return { ok: false, reason: 'its port is not allowed' };
  try {
    const response = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      dispatcher: agentFor(rules.allowPrivate),
      signal: AbortSignal.timeout(DOCUMENT_TIMEOUT_MS),
      headersTimeout: DOCUMENT_TIMEOUT_MS,
      bodyTimeout: DOCUMENT_TIMEOUT_MS,
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      return { ok: false, reason: `it answered HTTP ${response.statusCode} (redirects are not followed)` };
    }
    const declared = Number(response.headers['content-length'] ?? 0);
    if (declared > DOCUMENT_MAX_BYTES) {
      await response.body.dump();
      return { ok: false, reason: `it is larger than ${DOCUMENT_MAX_BYTES} bytes` };
    }
    const raw = await readCapped(response.body);
    if (!raw) return { ok: false, reason: `it is larger than ${DOCUMENT_MAX_BYTES} bytes` };
    const cacheControl = response.headers['cache-control'];
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return { ok: false, reason: 'it is not JSON' };
    }
    return { ok: true, body, maxAgeSeconds: cacheLifetime(Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl) };
  } catch (err) {
    return { ok: false, reason: errorCode(err) };
  }
}

/** Closes the shared connection pools on shutdown. */
export async function closeDocumentAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((agent) => agent.close()));
}
