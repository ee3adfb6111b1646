// The webhook receivers of bench:neighbour, in their own process, one role each:
//   healthy                 one HTTPS server on 127.0.0.1 answering 204 at once
//                           (organization B's target); each receipt's call id
//                           (the body's "id"), X-Delivery-Id, X-Delivery-Attempt
//                           and time go to the parent (receipts.js);
//   hang | slow | error     `count` HTTPS servers (organization A's broken
//                           targets, one port each, as distinct endpoints are):
//                           hang reads the request and never answers, slow
//                           answers 200 after 2 s, error answers 500 at once;
//   refuse                  `count` ports nothing listens on (each bound once
//                           by this process to get it from the kernel, then closed),
//                           so every connection is refused.
// It prints nothing; {type: 'stats'} asks for the requests received so far,
// {type: 'close'} (or the parent going away) ends it.
// argv: role certPath keyPath count
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { eventId, onBody, reportReceipt } from './receipts.js';

const [role, certPath, keyPath, countText] = process.argv.slice(2);
const count = Number(countText);
const SLOW_MS = 2000;
const tls = { cert: readFileSync(certPath), key: readFileSync(keyPath) };

let requests = 0;

/** What each role does with a request whose body has been read. */
const answer = {
  healthy(req, res, body, at) {
    reportReceipt([eventId(body) ?? '', String(req.headers['x-delivery-id'] ?? ''), Number(req.headers['x-delivery-attempt'] ?? 0), at]);
    res.writeHead(204).end();
  },
  hang() {},
  slow(_req, res) {
    setTimeout(() => res.writeHead(200).end('ok'), SLOW_MS);
  },
  error(_req, res) {
    res.writeHead(500, { 'content-type': 'text/plain' }).end('broken');
  },
};

async function listen(server) {
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return server.address().port;
}

const servers = [];
const sockets = new Set();
let ports;
if (role === 'refuse') {
  const bound = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = net.createServer();
      return { server, port: await listen(server) };
    }),
  );
  await Promise.all(bound.map(({ server }) => new Promise((resolve) => server.close(resolve))));
  ports = bound.map(({ port }) => port);
} else {
  const handle = answer[role];
  if (!handle) throw new Error(`neighbour-targets: unknown role ${role}`);
  ports = await Promise.all(
    Array.from({ length: role === 'healthy' ? 1 : count }, async () => {
      const server = https.createServer(
        tls,
        onBody((req, res, body, at) => {
          requests++;
          handle(req, res, body, at);
        }),
      );
      server.keepAliveTimeout = 60_000;
      // A hanging answer is ended by the client's time limit, not by the server's own.
      server.requestTimeout = 0;
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      servers.push(server);
      return listen(server);
    }),
  );
}

function close() {
  for (const socket of sockets) socket.destroy();
  process.exit(0);
}

process.on('disconnect', close);
process.on('message', (message) => {
  if (message?.type === 'stats') process.send({ type: 'stats', requests });
  if (message?.type === 'close') close();
});
process.send({ type: 'ready', urls: ports.map((port) => `https://127.0.0.1:${port}/hook`) });
