import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { createGroupCommit, type GroupCommitWork } from '../../src/db/group-commit.ts';

// The queue alone (no database): which items go alone, which together, and
// what each is answered when the batch statement fails. The database paths
// are tested where they are used (test/calls/completed-call-batches.test.ts,
// test/oauth/refresh-batches.test.ts).
describe('group commit', () => {
  function recording(together: GroupCommitWork<number, string>['together']) {
    const alone: number[] = [];
    const batches: number[][] = [];
    const leftOut: number[] = [];
    const work: GroupCommitWork<number, string> = {
      name: 'test batch',
      async alone(_key, item) {
        alone.push(item);
        return `alone ${item}`;
      },
      async together(key, items) {
        batches.push(items);
        return together(key, items);
      },
      async leftOut(_key, item) {
        leftOut.push(item);
        return `left out ${item}`;
      },
    };
    return { work, alone, batches, leftOut };
  }

  test('the first item goes alone at once; those arriving meanwhile go together, at most maxBatch each', async () => {
    const r = recording(async (_key, items) => items.map((i) => `together ${i}`));
    const queue = createGroupCommit(r.work, { maxBatch: 3 });
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => queue.write('k', i)));
    assert.deepEqual(r.alone, [1]);
    assert.deepEqual(r.batches, [
      [2, 3, 4],
      [5, 6],
    ]);
    assert.deepEqual(answers, ['alone 1', 'together 2', 'together 3', 'together 4', 'together 5', 'together 6']);
  });

  test('callers a write answered, writing again at once, go together in the next batch however deep their promise chains', async () => {
    const r = recording(async (_key, items) => items.map((i) => `together ${i}`));
    const queue = createGroupCommit(r.work, { maxBatch: 8 });
    // Four closed-loop clients, each awaiting its answer through a few async
    // layers (as a service's callers do) before it writes its next item.
    const through = async (item: number, layers: number): Promise<string> =>
      layers === 0 ? queue.write('k', item) : through(item, layers - 1);
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < 21) await through(next++, 5);
      }),
    );
    assert.deepEqual(r.alone, [0], 'only the first item went alone');
    assert.deepEqual(r.batches, [
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10, 11, 12],
      [13, 14, 15, 16],
      [17, 18, 19, 20],
    ]);
  });

  test('keys queue apart: the first item of each key goes at once', async () => {
    const r = recording(async (_key, items) => items.map((i) => `together ${i}`));
    const queue = createGroupCommit(r.work, { maxBatch: 8 });
    await Promise.all([queue.write('a', 1), queue.write('b', 2), queue.write('a', 3), queue.write('a', 5), queue.write('b', 4)]);
    assert.deepEqual(r.alone.slice(0, 2), [1, 2], 'b did not wait for a');
    assert.deepEqual(r.batches, [[3, 5]]);
  });

  test('an item the statement leaves out is answered by leftOut', async () => {
    const r = recording(async (_key, items) => items.map((i) => (i === 3 ? undefined : `together ${i}`)));
    const queue = createGroupCommit(r.work, { maxBatch: 8 });
    const answers = await Promise.all([1, 2, 3, 4].map((i) => queue.write('k', i)));
    assert.deepEqual(answers, ['alone 1', 'together 2', 'left out 3', 'together 4']);
    assert.deepEqual(r.leftOut, [3]);
  });

  test('a statement PostgreSQL refuses (nothing committed): each item again, alone', async () => {
    const r = recording(async () => {
      throw new pg.DatabaseError('deadlock detected', 0, 'error');
    });
    const queue = createGroupCommit(r.work, { maxBatch: 8 });
    const answers = await Promise.all([1, 2, 3].map((i) => queue.write('k', i)));
    assert.deepEqual(answers, ['alone 1', 'alone 2', 'alone 3']);
  });

  test('any other failure (a lost connection: unknown whether committed) fails the whole batch, nothing written again', async () => {
    const lost = new Error('Connection terminated unexpectedly');
    const r = recording(async () => {
      throw lost;
    });
    const queue = createGroupCommit(r.work, { maxBatch: 8 });
    const settled = await Promise.allSettled([1, 2, 3].map((i) => queue.write('k', i)));
    assert.deepEqual(
      settled.map((s) => s.status),
      ['fulfilled', 'rejected', 'rejected'],
    );
    assert.equal((settled[1] as PromiseRejectedResult).reason, lost);
    assert.deepEqual(r.alone, [1]);
  });

  test('idle() waits for every write on its way, over all keys, and for writes that start meanwhile', async () => {
    const finished: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const bothHeld = new Promise<void>((resolve) => (held = resolve));
    let entered = 0;
    const hold = async (items: number[]) => {
      if (++entered === 2) held();
      await gate;
      // The write that starts meanwhile ends a turn after the others.
      if (items.includes(4)) await new Promise((resolve) => setImmediate(resolve));
      finished.push(...items);
    };
    const queue = createGroupCommit<number, number>(
      {
        name: 'test batch',
        async alone(_key, item) {
          await hold([item]);
          return item;
        },
        async together(_key, items) {
          await hold(items);
          return items;
        },
      },
      { maxBatch: 8 },
    );
    const writes = [queue.write('a', 1), queue.write('b', 2), queue.write('a', 3)];
    let idle = false;
    const idled = queue.idle().then(() => (idle = true));
    // Both first writes are held at the gate (3 waits behind 1); a turn later idle() has still not resolved.
    await bothHeld;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(idle, false, 'writes are held');
    writes.push(queue.write('c', 4));
    release();
    await idled;
    assert.deepEqual(finished.sort(), [1, 2, 3, 4]);
    await Promise.all(writes);
    await queue.idle(); // nothing on its way: resolves at once
  });
});
