// The task layer: every piece of background work of `serve` and `worker` is
// a Task. A task has a name; start() resolves once it runs; stop() may be
// called any number of times and resolves once the tick in progress has
// ended; wake() asks for a tick now rather than at the next interval. Most
// tasks are periodic (below); the few that are not (the delivery worker,
// the key check) implement the same interface.
//
// Nothing here knows a capability: each capability exports its own tasks
// (src/background.ts lists them), built on this module.
import { jitter } from './jitter.ts';
import type { Outage, TaskLog } from './outage.ts';

export interface Task {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  wake(): void;
}

/** What every task of a process shares: its log and the one view of the database's outages. */
export interface TaskHost {
  log: TaskLog;
  outage: Outage;
}

/** What a tick is given: `stopping` turns true once stop() was called; `failed` reports a failure the tick went on after. */
export interface Tick {
  readonly stopping: boolean;
  failed(error: unknown, fields?: object): void;
}

export interface PeriodicJob {
  name: string;
  /** Between the end of one tick and the start of the next, ±10 %. */
  everyMs: number;
  /** One tick. Resolving to true asks for another at once (a full batch: more may be due). */
  run(tick: Tick): Promise<unknown>;
}

export interface PeriodicOptions {
  /** How long stop() waits for the tick in progress (unset: as long as it takes); what it cuts off must be safe to redo. */
  stopWaitMs?: number;
  /** Called once, after the last tick (closing connections of the task's own). */
  stopped?: () => void;
}

/** A job run every `everyMs` (the first tick one interval after start), its failures logged by the task layer's rules. */
export function periodic(host: TaskHost, job: PeriodicJob, options: PeriodicOptions = {}): Task {
  let state: 'new' | 'running' | 'stopped' = 'new';
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let again = false;
  let stopping: Promise<void> | undefined;

  const schedule = (delayMs: number) => {
    clearTimeout(timer);
    if (state !== 'running') return;
    timer = setTimeout(tick, delayMs);
    timer.unref();
  };
  const tick = () => {
    clearTimeout(timer);
    if (state !== 'running') return;
    if (ticking) {
      again = true;
      return;
    }
    ticking = runOnce(host, job, () => state === 'stopped').then((more) => {
      ticking = undefined;
      const now = again || more;
      again = false;
      schedule(now ? 0 : jitter(job.everyMs));
    });
  };
  const stop = async () => {
    state = 'stopped';
    clearTimeout(timer);
    if (ticking) await (options.stopWaitMs === undefined ? ticking : Promise.race([ticking, delay(options.stopWaitMs)]));
    options.stopped?.();
  };
  return {
    name: job.name,
    async start() {
      if (state !== 'new') return;
      state = 'running';
      schedule(jitter(job.everyMs));
    },
    stop() {
      stopping ??= stop();
      return stopping;
    },
    wake: tick,
  };
}

/** One tick: true when the job asked for another at once and nothing failed. */
async function runOnce(host: TaskHost, job: PeriodicJob, isStopping: () => boolean): Promise<boolean> {
  let failures = 0;
  const startedAt = Date.now();
  const failed = (error: unknown, fields: object = {}) => {
    failures++;
    if (!host.outage.away(job.name, error, startedAt)) host.log.error({ err: error, task: job.name, ...fields }, 'background task failed');
  };
  const tick: Tick = {
    get stopping() {
      return isStopping();
    },
    failed,
  };
  try {
    const more = await job.run(tick);
    if (failures === 0) host.outage.reachable(job.name);
    return more === true && failures === 0;
  } catch (error) {
    failed(error);
    return false;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Starts tasks in order; if one fails to start, stops those started and throws. */
export async function startAll(tasks: readonly Task[]): Promise<void> {
  const started: Task[] = [];
  try {
    for (const task of tasks) {
      await task.start();
      started.push(task);
    }
  } catch (error) {
    await stopAll(started);
    throw error;
  }
}

/** Stops tasks, all at once, each waiting for its tick in progress. */
export async function stopAll(tasks: readonly Task[]): Promise<void> {
  await Promise.all(tasks.map((task) => task.stop()));
}

/** Housekeeping's cadence: expired rows and old history go once an hour. */
export const HOURLY_MS = 3_600_000;

/** A tick run by hand (a command, a test): a failure the job reports throws at once. */
export const tickByHand: Tick = {
  stopping: false,
  failed(error) {
    throw error;
  },
};
