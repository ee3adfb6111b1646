// Which processes use the embedded PostgreSQL of a DATA_DIR, so that the last
// one to stop cleanly stops it, and a server whose processes are all gone
// (kill -9) is adopted by the next one instead of being left running forever.
//
// Each process that starts or attaches to the server writes DATA_DIR/pg.attached/<pid>
// (holding its start time, so a recycled pid is not taken for it) and removes it when
// it stops. Starting, attaching and the last stop happen under DATA_DIR/pg.lock, so a
// process never attaches to a server that another is stopping.
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A process: its pid and, where /proc tells it, its start time (clock ticks since boot). */
interface ProcessId {
  pid: number;
  startedAt: string;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat; '' where there is no /proc (the pid alone then identifies the process). */
async function startTimeOf(pid: number): Promise<string> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

async function self(): Promise<ProcessId> {
  return { pid: process.pid, startedAt: await startTimeOf(process.pid) };
}

/** True while the process that wrote `text` ("<pid> <start time>") runs. */
async function isRunning(text: string): Promise<boolean> {
  const [pidText, startedAt = ''] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return false;
  const current = startedAt === '' ? '' : await startTimeOf(pid);
  return current === '' || current === startedAt;
}

const format = (id: ProcessId) => `${id.pid} ${id.startedAt}\n`;

const attachedDir = (dataDir: string) => path.join(dataDir, 'pg.attached');

export async function attach(dataDir: string): Promise<void> {
  await mkdir(attachedDir(dataDir), { recursive: true });
  await writeFile(path.join(attachedDir(dataDir), String(process.pid)), format(await self()));
}

export async function detach(dataDir: string): Promise<void> {
  await rm(path.join(attachedDir(dataDir), String(process.pid)), { force: true });
}

/** Pids of the other live processes attached to DATA_DIR's server; entries of processes gone are removed. */
export async function otherAttached(dataDir: string): Promise<number[]> {
  const entries = await readdir(attachedDir(dataDir)).catch(() => [] as string[]);
  const live: number[] = [];
  for (const entry of entries) {
    if (entry === String(process.pid)) continue;
    const file = path.join(attachedDir(dataDir), entry);
    const text = await readFile(file, 'utf8').catch(() => '');
    if (await isRunning(text)) live.push(Number(entry));
    else await rm(file, { force: true });
  }
  return live;
}

/** A lock file whose holder wrote nothing for this long died between creating and writing it. */
const UNWRITTEN_LOCK_MS = 10_000;
const LOCK_WAIT_MS = 180_000;

/** Runs `fn` holding DATA_DIR/pg.lock; a lock left by a process that is gone is taken over. */
export async function withDataDirLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(dataDir, 'pg.lock');
  const me = format(await self());
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await writeFile(lock, me, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readFile(lock, 'utf8').catch(() => undefined);
    if (holder !== undefined) {
      const abandoned =
        holder.trim() === ''
          ? Date.now() -
              (await stat(lock).then(
                (s) => s.mtimeMs,
                () => Date.now(),
              )) >
            UNWRITTEN_LOCK_MS
          : !(await isRunning(holder));
      // Removed only if still the same holder's (another waiter may have taken it over meanwhile).
      if (abandoned && (await readFile(lock, 'utf8').catch(() => undefined)) === holder) {
        await rm(lock, { force: true });
        continue;
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`${lock} is held by process ${holder?.trim().split(' ')[0]} for over ${LOCK_WAIT_MS / 1000} s`);
    }
    await sleep(100);
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { force: true });
  }
}
