// One webhook HTTP attempt (docs/interface.md §6.5):
// HTTPS only, POST, no redirects followed, the dialled address checked, a
// total time limit, at most 4 KiB of the answer read. Whatever the target
// does comes back as a value; the retry policy decides what it means.
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { checkPort, checkUrlShape } from '../../ssrf/check-hook-url.ts';
import { BLOCKED_ADDRESS_CODE, checkedConnector } from '../../ssrf/checked-connect.ts';

export const RESPONSE_EXCERPT_BYTES = 4096;
const MAX_CONNECT_TIMEOUT_MS = 10_000;

export interface DeliveryRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** The whole attempt: connect, TLS, request, response headers and the excerpt. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: skip the public-address check when dialling. */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOWED_PORTS, checked again at send time: the list may have shrunk since the subscription was made. */
  allowedPorts: readonly number[] | '*';
  /** Cuts the attempt short (its claim never committed: no lease covers it any more). */
  signal?: AbortSignal;
}

export type DeliveryErrorKind = 'timeout' | 'connection' | 'tls' | 'blocked_address' | 'blocked_port' | 'invalid_url';

export type DeliveryOutcome =
  | { kind: 'response'; status: number; retryAfter?: string; bodyExcerpt: string; latencyMs: number }
  | { kind: 'error'; error: DeliveryErrorKind; message: string; latencyMs: number };

// Agents are shared so connections to a target are kept alive across deliveries.
const agents = new Map<string, Agent>();

function agentFor(allowPrivate: boolean, timeoutMs: number): Agent {
  const connectTimeoutMs = Math.min(timeoutMs, MAX_CONNECT_TIMEOUT_MS);
  const key = `${allowPrivate}:${connectTimeoutMs}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ connect: checkedConnector({ allowPrivate, connectTimeoutMs }), allowH2: false });
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the shared connection pools (on shutdown, so idle keep-alive sockets do not hold the process). */
export async function closeDeliveryAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((agent) => agent.close()));
}

function errorChain(err: unknown): { code?: unknown; message?: unknown }[] {
  const chain: { code?: unknown; message?: unknown }[] = [];
  let current: unknown = err;
  while (current && typeof current === 'object' && chain.length < 5) {
    chain.push(current as { code?: unknown; message?: unknown });
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|EPROTO$)|CERT|SIGNED|UNABLE_TO_|HOSTNAME_MISMATCH/;

function classify(err: unknown): { error: DeliveryErrorKind; message: string } {
  const chain = errorChain(err);
  const codes = chain.map((e) => (typeof e.code === 'string' ? e.code : ''));
  const deepest = chain.at(-1);
  const message = typeof deepest?.message === 'string' && deepest.message ? deepest.message : String(err);
  if (codes.includes(BLOCKED_ADDRESS_CODE)) return { error: 'blocked_address', message };
  if (codes.some((code) => TIMEOUT_CODES.has(code))) return { error: 'timeout', message };
  if (codes.some((code) => TLS_CODE.test(code))) return { error: 'tls', message };
  return { error: 'connection', message };
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Reads at most RESPONSE_EXCERPT_BYTES, then drops the rest (and with it the connection). */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const take = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - size);
      chunks.push(take);
      size += take.length;
      if (size >= RESPONSE_EXCERPT_BYTES) break;
    }
  } catch {
    // The status has arrived; a body cut off by the time limit or a reset keeps what was read.
  } finally {
    body.destroy();
  }
  // stream: true holds back a multi-byte character split at the cut instead of mangling it.
  const text = new TextDecoder('utf-8').decode(Buffer.concat(chunks), { stream: true });
  // PostgreSQL text cannot hold NUL; the excerpt is for people to read.
  return text.replaceAll('\u0000', '\uFFFD');
}

export async function deliver(req: DeliveryRequest): Promise<DeliveryOutcome> {
  const started = performance.now();
  const latencyMs = () => Math.round(performance.now() - started);

  const shape = checkUrlShape(req.url);
  if (!shape.ok) return { kind: 'error', error: 'invalid_url', message: shape.reason, latencyMs: latencyMs() };
  const port = checkPort(shape.url, req.allowedPorts);
  if (!port.ok) return { kind: 'error', error: 'blocked_port', message: port.reason, latencyMs: latencyMs() };

  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`no complete answer within ${req.timeoutMs} ms`));
  }, req.timeoutMs);
  const cut = () => controller.abort(req.signal!.reason);
  if (req.signal?.aborted) cut();
  else req.signal?.addEventListener('abort', cut, { once: true });
  try {
    const res = await request(shape.url, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      dispatcher: agentFor(req.allowPrivate, req.timeoutMs),
      signal: controller.signal,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    });
    const bodyExcerpt = await readExcerpt(res.body);
    const retryAfter = firstHeader(res.headers['retry-after']);
    return {
      kind: 'response',
      status: res.statusCode,
      ...(retryAfter !== undefined && { retryAfter }),
      bodyExcerpt,
      latencyMs: latencyMs(),
    };
  } catch (err) {
    if (timedOut) return { kind: 'error', error: 'timeout', message: `no response within ${req.timeoutMs} ms`, latencyMs: latencyMs() };
    return { kind: 'error', ...classify(err), latencyMs: latencyMs() };
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', cut);
  }
}
