// What a process holds (a database, pools, caches, a listener, an app, its
// tasks), taken in order and given back in reverse: the last taken is the
// first released, so nothing is released while something taken after it may
// still use it. A failure at any step of a start releases what was taken.

export interface Resources {
  /** Acquires a resource with `open`; `release` gives it back when release() runs. */
  take<T>(name: string, open: () => T | Promise<T>, release: (value: T) => unknown): Promise<T>;
  /** Releases everything taken, newest first, each once; a failing release does not keep the others held (its error is thrown after). */
  release(): Promise<void>;
}

export function resourceStack(): Resources {
  const held: { name: string; release: () => unknown }[] = [];
  let releasing: Promise<void> | undefined;
  const releaseAll = async () => {
    const failures: Error[] = [];
    for (let next = held.pop(); next; next = held.pop()) {
      try {
        await next.release();
      } catch (error) {
        failures.push(new Error(`releasing ${next.name}: ${(error as Error).message}`, { cause: error }));
      }
    }
    if (failures.length > 0) throw failures[0];
  };
  return {
    async take(name, open, release) {
      if (releasing) throw new Error(`${name}: the process is stopping`);
      const value = await open();
      if (releasing) {
        // Stopped while this one was being taken: given back at once.
        await release(value);
        throw new Error(`${name}: the process is stopping`);
      }
      held.push({ name, release: () => release(value) });
      return value;
    },
    release() {
      releasing ??= releaseAll();
      return releasing;
    },
  };
}
