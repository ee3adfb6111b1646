// serve and worker watch the embedded PostgreSQL they use: a server that
// dies without being asked to (the OOM killer) is started again on the same
// port, so every pool's URL stays valid, with backoff, for up to its
// recovery window (EMBEDDED_POSTGRES_RECOVERY_WINDOW); after that the process
// gives up, so that a supervisor acts.

export interface Supervision {
  /** The server ended without being asked to; it is being started again. */
  lost(pid: number): void;
  /** It answers again after `outageMs`. */
  recovered(outageMs: number): void;
  /** It could not be started again within the recovery window: the process should exit so that a supervisor acts. */
  failed(error: Error): void;
  /** How long a process keeps trying to bring its embedded PostgreSQL back before giving up. */
  recoveryWindowMs: number;
}

const WATCH_INTERVAL_MS = 500;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

interface Watched {
  initialPid: number;
  /** The postmaster running on the cluster, if any. */
  running(): Promise<{ pid: number } | undefined>;
  /** Starts it again on the same port (or finds that another attached process did); throws when it cannot. */
  restart(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Watches the server every half second; stop() ends the watch and waits for a restart under way. */
export function superviseServer(supervision: Supervision, server: Watched): { stop(): Promise<void> } {
  let stopping = false;
  let recovering: Promise<void> | undefined;
  let lastPid = server.initialPid;

  const recover = async (lostPid: number) => {
    supervision.lost(lostPid);
    const since = Date.now();
    for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
      if (stopping) return;
      try {
        await server.restart();
        supervision.recovered(Date.now() - since);
        return;
      } catch (error) {
        if (Date.now() - since + delay > supervision.recoveryWindowMs) {
          supervision.failed(error as Error);
          return;
        }
      }
      await sleep(delay);
    }
  };
  const look = async () => {
    const running = await server.running();
    if (running) {
      lastPid = running.pid;
      return;
    }
    if (stopping || recovering) return;
    recovering = recover(lastPid).finally(() => (recovering = undefined));
  };
  const watch = setInterval(() => {
    if (!stopping && !recovering) void look();
  }, WATCH_INTERVAL_MS);
  watch.unref();
  return {
    async stop() {
      stopping = true;
      clearInterval(watch);
      await recovering;
    },
  };
}
