// A real HTTPS webhook target on 127.0.0.1 (certificate from the throwaway
// test CA that scripts/test.ts makes and trusts through NODE_EXTRA_CA_CERTS).
// It records every request and answers each one as the test programs it.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: Date;
  /** The client's port: the same for requests sent over one kept-alive connection. */
  remotePort: number;
  /** Requests open at this target when this one arrived, this one included (its peak concurrency is the largest). */
  openAtArrival: number;
  /** When its answer was finished or its connection closed (unset while it is open). */
  closedAt?: Date;
}

export interface TargetResponse {
  status?: number;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the connection is only closed by close()). */
  hang?: boolean;
  /** Send status, headers and body, then neither end the response nor close. */
  stall?: boolean;
  /** Drop the connection without answering. */
  destroy?: boolean;
}

/** Decides the answer to one request; `index` counts requests from 0. */
export type TargetHandler = (request: RecordedRequest, index: number) => TargetResponse | Promise<TargetResponse>;

export interface HttpsTarget {
  /** `https://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  port: number;
  /** Every request received so far, in arrival order. */
  requests: RecordedRequest[];
  /** Requests received and neither answered nor cut off yet. */
  readonly open: number;
  /** Replaces the handler for the requests that follow. */
  respond(handler: TargetHandler): void;
  /** Resolves once at least `count` requests have arrived (rejects after `timeoutMs`). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

export function testTlsCredentials(): { cert: Buffer; key: Buffer } {
  const certPath = process.env.SB_TEST_TLS_CERT;
  const keyPath = process.env.SB_TEST_TLS_KEY;
  if (!certPath || !keyPath) {
    throw new Error(
      'SB_TEST_TLS_CERT/SB_TEST_TLS_KEY are unset: run tests through scripts/test.ts (npm test, or npx tsx scripts/test.ts FILE)',
    );
  }
  return { cert: readFileSync(certPath), key: readFileSync(keyPath) };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startHttpsTarget(
  handler: TargetHandler = () => ({ status: 200 }),
  /** A fixed port (a target that comes back where it was); a free one by default. */
  options: { port?: number } = {},
): Promise<HttpsTarget> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: (requests: RecordedRequest[]) => void }[] = [];

  let open = 0;

  async function onRequest(req: IncomingMessage, res: ServerResponse) {
    // Counted as it arrives, before its body is read, and until its answer is done or its connection gone.
    const openAtArrival = ++open;
    let closedAt: Date | undefined;
    let recordedRequest: RecordedRequest | undefined;
    res.once('close', () => {
      open--;
      closedAt = new Date();
      if (recordedRequest) recordedRequest.closedAt = closedAt;
    });
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: await readBody(req),
      receivedAt: new Date(),
      remotePort: req.socket.remotePort ?? 0,
      openAtArrival,
      ...(closedAt ? { closedAt } : {}),
    };
    recordedRequest = recorded;
    const index = requests.push(recorded) - 1;
    for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(requests.slice());
    }
    const answer = await current(recorded, index);
    if (answer.hang) return;
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    if (res.destroyed) return;
    if (answer.destroy) {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status ?? 200, answer.headers);
    if (answer.stall) res.write(answer.body ?? '');
    else res.end(answer.body ?? '');
  }

  const server = https.createServer({ ...testTlsCredentials() }, (req, res) => {
    onRequest(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    port,
    requests,
    get open() {
      return open;
    },
    respond(next) {
      current = next;
    },
    waitForRequests(count, timeoutMs = 10_000) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`target got ${requests.length} of ${count} requests within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: (seen) => {
            clearTimeout(timer);
            resolve(seen);
          },
        });
      });
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
