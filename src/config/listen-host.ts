// HOST is tried before any database work: a name that does not resolve or an
// address this machine does not have otherwise failed only at the very end of
// a start (after the embedded PostgreSQL and the migrations), as a bare
// "getaddrinfo ENOTFOUND". A throw-away listener on a free port of HOST shows
// whether the address can be listened on without taking PORT.
import net from 'node:net';
import { ConfigError } from './config.ts';

/** Throws a ConfigError naming HOST when nothing can listen on `host`. */
export async function checkListenHost(host: string): Promise<void> {
  const server = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, resolve);
    });
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    throw new ConfigError(
      'HOST',
      `cannot listen on "${host}" (${code}); use an address of this machine, such as 127.0.0.1, or 0.0.0.0 for every interface`,
    );
  } finally {
    if (server.listening) server.close();
  }
}
