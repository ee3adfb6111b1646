// The task layer (src/tasks): a periodic task ticks, can be woken, stops once
// however often it is asked and waits for its tick in progress; while the
// database is away it logs one warning when the outage begins and one line
// when it ends, never an error per tick.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isDatabaseUnavailable } from '../../src/db/availability.ts';
import { jitter } from '../../src/tasks/jitter.ts';
import { outageWatch } from '../../src/tasks/outage.ts';
import { periodic, type TaskHost } from '../../src/tasks/task.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Line {
  level: 'error' | 'warn' | 'info';
  fields: Record<string, unknown>;
  message: string;
}

function recordingHost(): { host: TaskHost; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: Line['level']) => (fields: object, message: string) =>
    lines.push({ level, fields: fields as Line['fields'], message });
  const log = { error: at('error'), warn: at('warn'), info: at('info') };
  return { host: { log, outage: outageWatch(log, isDatabaseUnavailable) }, lines };
}

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    assert.ok(Date.now() < deadline, 'condition not reached in time');
    await sleep(5);
  }
}

describe('the task layer', () => {
  test('jitter moves a value by at most ±10 % by default', () => {
    assert.equal(
      jitter(1000, () => 0),
      900,
    );
    assert.equal(
      jitter(1000, () => 0.5),
      1000,
    );
    assert.ok(jitter(1000, () => 0.999999) < 1100);
    assert.equal(
      jitter(1000, () => 0, 0.2),
      800,
    );
  });

  test('a periodic task ticks every interval, runs at once when woken, and again at once when a tick asks', async () => {
    const { host } = recordingHost();
    let ticks = 0;
    const task = periodic(host, { name: 'counting', everyMs: 60_000, run: async () => ++ticks < 3 });
    task.wake();
    assert.equal(ticks, 0, 'not started: a wake does nothing');
    await task.start();
    task.wake();
    await until(() => ticks === 3);
    await sleep(50);
    assert.equal(ticks, 3, 'then waits for its interval');
    await task.stop();
  });

  test('stop waits for the tick in progress, is safe twice, and no tick follows', async () => {
    const { host } = recordingHost();
    let finished = false;
    let ticks = 0;
    const task = periodic(host, {
      name: 'slow',
      everyMs: 5,
      run: async () => {
        ticks++;
        await sleep(200);
        finished = true;
      },
    });
    await task.start();
    await until(() => ticks === 1);
    await Promise.all([task.stop(), task.stop()]);
    assert.ok(finished, 'the tick in progress ended before stop resolved');
    await task.stop();
    await sleep(50);
    assert.equal(ticks, 1);
  });

  test('a database outage: one warning when it begins, one info line when it ends, never an error per tick', async () => {
    const { host, lines } = recordingHost();
    let away = true;
    let ticks = 0;
    const run = async () => {
      ticks++;
      if (away) throw Object.assign(new Error('the database system is starting up'), { code: '57P03' });
    };
    const first = periodic(host, { name: 'first', everyMs: 5, run });
    const second = periodic(host, { name: 'second', everyMs: 5, run: async () => run() });
    await Promise.all([first.start(), second.start()]);
    await until(() => ticks >= 10);
    away = false;
    const atEnd = ticks;
    await until(() => ticks >= atEnd + 4);
    await Promise.all([first.stop(), second.stop()]);
    assert.deepEqual(
      lines.map((line) => [line.level, line.message]),
      [
        ['warn', 'database unreachable: background tasks wait for it'],
        ['info', 'database reachable again: background tasks resume'],
      ],
    );
    assert.equal(typeof lines[1]!.fields.outage_ms, 'number');
  });

  test('work begun before the database came back that fails after it met the outage that ended: no new warning', async () => {
    const { host, lines } = recordingHost();
    const starting = () => Object.assign(new Error('the database system is starting up'), { code: '57P03' });
    const begun = Date.now();
    assert.equal(host.outage.away('first', starting(), begun), true);
    await sleep(5);
    host.outage.reachable('second');
    assert.equal(host.outage.away('first', starting(), begun), true, 'still told apart from a failure of its own');
    assert.equal(host.outage.down, false);
    await sleep(5);
    assert.equal(host.outage.away('first', starting(), Date.now()), true);
    assert.equal(host.outage.down, true, 'work begun after the database came back starts a new outage');
    assert.deepEqual(
      lines.map((line) => [line.level, line.message]),
      [
        ['warn', 'database unreachable: background tasks wait for it'],
        ['info', 'database reachable again: background tasks resume'],
        ['warn', 'database unreachable: background tasks wait for it'],
      ],
    );
  });

  test('a failure of the task itself is an error line naming the task', async () => {
    const { host, lines } = recordingHost();
    const task = periodic(host, {
      name: 'broken',
      everyMs: 60_000,
      run: async () => {
        throw new Error('a bug');
      },
    });
    await task.start();
    task.wake();
    await until(() => lines.length === 1);
    await task.stop();
    assert.equal(lines[0]!.level, 'error');
    assert.equal(lines[0]!.fields.task, 'broken');
  });
});
