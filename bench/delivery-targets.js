// The webhook receivers of bench:delivery, in their own process: N HTTPS
// servers on 127.0.0.1 answering 204. Each receipt's event id and time
// (performance.timeOrigin + now(), a clock the other processes share to well
// under a millisecond) go to the parent over IPC in small batches.
// argv: certPath keyPath count
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { performance } from 'node:perf_hooks';

const [certPath, keyPath, countText] = process.argv.slice(2);
const cert = readFileSync(certPath);
const key = readFileSync(keyPath);
let pending = [];
let timer;

function flush() {
  timer = undefined;
  const items = pending;
  pending = [];
  process.send({ type: 'received', items });
}

function received(body, at) {
  // The raw baseline sends id "raw": counted by its own process, not reported.
  const match = /^\{"id":"([^"]+)"/.exec(body);
  if (!match || match[1] === 'raw') return;
  pending.push([match[1], at]);
  timer ??= setTimeout(flush, 5);
}

const servers = await Promise.all(Array.from({ length: Number(countText) }, async () => {
  const server = https.createServer({ cert, key }, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      received(Buffer.concat(chunks).toString('utf8'), performance.timeOrigin + performance.now());
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}));

process.on('message', (message) => {
  if (message?.type !== 'close') return;
  for (const server of servers) server.closeAllConnections();
  process.exit(0);
});
process.send({ type: 'ready', urls: servers.map((server) => `https://127.0.0.1:${server.address().port}/hook`) });
