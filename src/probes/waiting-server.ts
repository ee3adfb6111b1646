// While `serve` or `worker` waits for an external PostgreSQL that does not
// answer yet (src/db/reach-database.ts), its port already answers: /healthz 200
// (the process is alive and retrying by itself: restarting it would not help)
// and every other request 503 NOT_READY with Retry-After, so load balancers
// keep traffic away. It goes on answering while migrations run and closes just
// before the application listens on the same port (the one it took, when PORT
// is 0).
import http from 'node:http';
import type net from 'node:net';
import { DATABASE_RETRY_AFTER_SECONDS } from '../db/availability.ts';
import { problemType } from '../http/problem-details.plugin.ts';
import { answerLiveness } from './liveness-server.ts';

const BODY = JSON.stringify({
  type: problemType('NOT_READY'),
  title: 'Service Unavailable',
  status: 503,
  detail: 'waiting for the database',
  code: 'NOT_READY',
});

export interface WaitingProbes {
  /** The port to listen on: the one this server took once started, else the configured one. */
  readonly port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function waitingProbes(host: string, port: number): WaitingProbes {
  let server: http.Server | undefined;
  let taken: number | undefined;
  return {
    get port() {
      return taken ?? port;
    },
    async start() {
      if (server) return;
      server = http.createServer((request, response) => {
        if (answerLiveness(request, response, {})) return;
        response.writeHead(503, {
          'content-type': 'application/problem+json; charset=utf-8',
          'content-length': Buffer.byteLength(BODY),
          'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
          'x-content-type-options': 'nosniff',
        });
        response.end(BODY);
      });
      const listening = server;
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(taken ?? port, host, resolve);
      });
      taken = (listening.address() as net.AddressInfo).port;
    },
    async stop() {
      const closing = server;
      server = undefined;
      if (!closing) return;
      await new Promise<void>((resolve) => {
        closing.close(() => resolve());
        closing.closeAllConnections();
      });
    },
  };
}
