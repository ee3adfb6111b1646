// The floor of bench:api's read rows (BENCH_ROWS=recent-floor,locations-floor),
// in its own process: bare Fastify answering a read with the very bytes
// Switchboard answered it with (body and headers, captured by bench/api.ts
// once before the rows run). No credentials, cache, log line, metrics or
// hooks: what any Fastify server pays to send that answer. A bound for the
// reads' ratio goals, not a product.
// argv: port, then the captured answers' file ({ path: { headers, body } }).
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const answers = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const app = Fastify();
app.get('/', async () => ({ hello: 'world' }));
for (const [url, { headers, body }] of Object.entries(answers)) {
  app.get(url, (_request, reply) => reply.headers(headers).send(body));
}
await app.listen({ port: Number(process.argv[2] ?? 0), host: '127.0.0.1' });
process.stdout.write('listening\n');
