// What background work does while the database is away (an embedded
// PostgreSQL restarting after a crash, an external server down or failing
// over): it waits quietly. The first tick that finds the database away logs
// one warning, the first tick that reaches it again one line, and the ticks
// in between nothing: the outage is the operator's news once, not once per
// tick of every task. Work that began before the database was seen back, and
// fails after, met the outage that just ended: it is no new one (a tick that
// waited on a connection through a restart fails once the restart is over).

/** The part of a pino logger the task layer writes to. */
export interface TaskLog {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

export interface Outage {
  /**
   * Work of `task` begun at `startedAt` (Date.now()) failed with `error`: true when that is the database being away
   * (logged at most once an outage).
   */
  away(task: string, error: unknown, startedAt: number): boolean;
  /** A tick of `task` reached the database: ends the outage, if any. */
  reachable(task: string): void;
  readonly down: boolean;
}

/** One per process, shared by all its tasks; `isOutage` tells the database being away from a failure of the task's own. */
export function outageWatch(log: TaskLog, isOutage: (error: unknown) => boolean): Outage {
  let since: number | undefined;
  let endedAt = Number.NEGATIVE_INFINITY;
  return {
    get down() {
      return since !== undefined;
    },
    away(task, error, startedAt) {
      if (!isOutage(error)) return false;
      if (since === undefined && startedAt <= endedAt) return true;
      if (since === undefined) {
        since = Date.now();
        log.warn({ component: 'tasks', task, err: error }, 'database unreachable: background tasks wait for it');
      }
      return true;
    },
    reachable(task) {
      if (since === undefined) return;
      endedAt = Date.now();
      log.info({ component: 'tasks', task, outage_ms: endedAt - since }, 'database reachable again: background tasks resume');
      since = undefined;
    },
  };
}
