// A TCP proxy in front of PostgreSQL whose connections can go silent: open,
// but no byte passes either way and nothing tells either end (no FIN, no
// RST) — what a dropped route or a NAT table that forgot the flow looks like.
// A silent connection stays silent: when one end closes it, the other end is
// not told either (the server of a silent connection never learns that its
// client went away). Connections made afterwards pass normally.
import net from 'node:net';

export interface SilentProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string;
  /** Connections whose client end is open and not silent. */
  readonly open: number;
  /** Every open connection goes silent; new ones are not affected. */
  silence(): void;
  /**
   * The next client message containing `text` (a simple query's SQL, say)
   * silences its connection before it reaches the server: the route dies just
   * then. Resolves when that happened.
   */
  silenceWhenClientSends(text: string): Promise<void>;
  /** Resolves once a silent connection has swallowed a server message containing `text` (a NOTIFY's payload, say). */
  swallowedFromServer(text: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

interface Flow {
  client: net.Socket;
  upstream: net.Socket;
  silent: boolean;
}

/** A proxy to `databaseUrl`'s server on `port` of 127.0.0.1 (0: a free one). */
export async function startSilentProxy(databaseUrl: string, port = 0): Promise<SilentProxy> {
  const target = new URL(databaseUrl);
  const flows = new Set<Flow>();
  let trigger: { text: Buffer; fired: () => void } | undefined;
  const swallowWaiters: { text: Buffer; resolve: () => void }[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    const flow: Flow = { client, upstream, silent: false };
    flows.add(flow);
    client.on('data', (chunk) => {
      if (trigger && chunk.includes(trigger.text)) {
        trigger.fired();
        trigger = undefined;
        flow.silent = true;
      }
      if (!flow.silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!flow.silent) {
        client.write(chunk);
        return;
      }
      for (const waiter of swallowWaiters.filter((w) => chunk.includes(w.text))) {
        swallowWaiters.splice(swallowWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
    // A close passes to the other end only while the flow is not silent.
    const closed = (socket: net.Socket, other: net.Socket) => () => {
      socket.destroy();
      if (!flow.silent) {
        other.destroy();
        flows.delete(flow);
      }
    };
    client.on('close', closed(client, upstream));
    upstream.on('close', closed(upstream, client));
    client.on('error', () => client.destroy());
    upstream.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const listening = (server.address() as net.AddressInfo).port;
  return {
    urlFor(url) {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(listening);
      return proxied.toString();
    },
    get open() {
      return [...flows].filter((flow) => !flow.silent && !flow.client.destroyed).length;
    },
    silence() {
      for (const flow of flows) flow.silent = true;
    },
    silenceWhenClientSends(text) {
      return new Promise((resolve) => (trigger = { text: Buffer.from(text), fired: resolve }));
    },
    swallowedFromServer(text, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no silent connection swallowed "${text}" within ${timeoutMs} ms`)), timeoutMs);
        swallowWaiters.push({
          text: Buffer.from(text),
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    async close() {
      for (const flow of flows) {
        flow.client.destroy();
        flow.upstream.destroy();
      }
      flows.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
