// HOST and PORT are tried before any database work: a name that does not
// resolve, an address this machine does not have or a port another process
// holds otherwise failed only at the very end of a start (after the embedded
// PostgreSQL and the migrations), as a bare "getaddrinfo ENOTFOUND" or
// "EADDRINUSE". A throw-away listener on a free port of HOST shows whether
// the address can be listened on; one on the port, closed at once, whether
// the port is free.
import net from 'node:net';
import { ConfigError } from './config.ts';

/** Listens on `port` of `host` and closes at once; rejects with the listener's error. */
async function tryListen(host: string, port: number): Promise<void> {
  const server = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
  } finally {
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * Throws a ConfigError naming HOST when nothing can listen on `host`, and one
 * naming `variable` (PORT, WORKER_PORT) when another process holds `port`.
 */
export async function checkListenAddress(host: string, port: number, variable: 'PORT' | 'WORKER_PORT'): Promise<void> {
  try {
    await tryListen(host, 0);
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    throw new ConfigError(
      'HOST',
      `cannot listen on "${host}" (${code}); use an address of this machine, such as 127.0.0.1, or 0.0.0.0 for every interface`,
    );
  }
  if (port === 0) return;
  try {
    await tryListen(host, port);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw error;
    const why =
      code === 'EADDRINUSE'
        ? `port ${port} on ${host} is taken by another process: another Switchboard server may be running (a second npm start?); stop it, or set ${variable} to a free port`
        : `port ${port} on ${host} needs privileges this process does not have (EACCES); set ${variable} to a port above 1023`;
    throw new ConfigError(variable, why);
  }
}
