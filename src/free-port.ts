// A TCP port on 127.0.0.1 that nothing listens on: the embedded PostgreSQL's,
// and the benches' and tests' servers of their own. Another process may take
// it before the caller listens; each caller's start fails loudly if it does.
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
