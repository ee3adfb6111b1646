// The webhook receivers of bench:delivery, in their own process: N HTTPS
// servers on 127.0.0.1 answering 204. Each receipt's event id and time go to
// the parent (receipts.js).
// argv: certPath keyPath count
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { eventId, onBody, reportReceipt } from './receipts.js';

const [certPath, keyPath, countText] = process.argv.slice(2);
const cert = readFileSync(certPath);
const key = readFileSync(keyPath);

const servers = await Promise.all(
  Array.from({ length: Number(countText) }, async () => {
    const server = https.createServer(
      { cert, key },
      onBody((_req, res, body, at) => {
        const id = eventId(body);
        // The raw baseline sends id "raw": counted by its own process, not reported.
        if (id !== undefined && id !== 'raw') reportReceipt([id, at]);
        res.writeHead(204).end();
      }),
    );
    server.keepAliveTimeout = 60_000;
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return server;
  }),
);

process.on('message', (message) => {
  if (message?.type !== 'close') return;
  for (const server of servers) server.closeAllConnections();
  process.exit(0);
});
process.send({ type: 'ready', urls: servers.map((server) => `https://127.0.0.1:${server.address().port}/hook`) });
