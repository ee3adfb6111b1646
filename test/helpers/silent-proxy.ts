// A TCP proxy in front of PostgreSQL that can go silent: the connections it
// carries stay open but no byte passes either way, and nothing tells either
// end (no FIN, no RST) — what a dropped route or a NAT table that forgot the
// flow looks like. Connections made afterwards pass normally.
import net from 'node:net';

export interface SilentProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string;
  /** Connections open through the proxy now. */
  readonly open: number;
  /** Every open connection goes silent; new ones are not affected. */
  silence(): void;
  close(): Promise<void>;
}

interface Flow {
  client: net.Socket;
  upstream: net.Socket;
  silent: boolean;
}

export async function startSilentProxy(databaseUrl: string): Promise<SilentProxy> {
  const target = new URL(databaseUrl);
  const flows = new Set<Flow>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    const flow: Flow = { client, upstream, silent: false };
    flows.add(flow);
    client.on('data', (chunk) => {
      if (!flow.silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!flow.silent) client.write(chunk);
    });
    const end = () => {
      flows.delete(flow);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('close', end);
      socket.on('error', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    urlFor(url) {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    get open() {
      return flows.size;
    },
    silence() {
      for (const flow of flows) flow.silent = true;
    },
    async close() {
      for (const flow of flows) {
        flow.client.destroy();
        flow.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
