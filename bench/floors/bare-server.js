// The baseline of bench:api: a bare Fastify process with one route and
// nothing else (no logging, no hooks), on the port given as the first argument.
import Fastify from 'fastify';

const app = Fastify();
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.argv[2] ?? 0), host: '127.0.0.1' });
process.stdout.write('listening\n');
