// CPU time spent by the benchmark's processes, read from /proc (Linux), so a
// figure can be given per delivery: on a shared 2-CPU machine a rate moves
// with whatever else runs, while the CPU each side spends per delivery does
// not, and it says whether a ratio goal fits the machine at all.
import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux the project runs on (getconf CLK_TCK)

interface Stat {
  ppid: number;
  /** utime + stime, and with children: cutime + cstime (reaped children, such as ended PostgreSQL backends). */
  own: number;
  reaped: number;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may hold spaces: fields count from after it.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const at = (field: number) => Number(fields[field - 3]);
  return { ppid: at(4), own: at(14) + at(15), reaped: at(16) + at(17) };
}

/** CPU seconds of `pid` (and of its reaped children when `withChildren`). */
export function cpuSeconds(pid: number, withChildren = false): number {
  const stat = readStat(pid);
  if (!stat) return NaN;
  return (stat.own + (withChildren ? stat.reaped : 0)) / TICKS_PER_SECOND;
}

/** CPU seconds of a PostgreSQL server: the postmaster, its reaped backends and its live ones. */
export function serverCpuSeconds(postmasterPid: number): number {
  const postmaster = readStat(postmasterPid);
  if (!postmaster) return NaN;
  let ticks = postmaster.own + postmaster.reaped;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.ppid === postmasterPid) ticks += stat.own;
  }
  return ticks / TICKS_PER_SECOND;
}

/** The postmaster of the server a backend belongs to, when that server runs on this machine. */
export function postmasterOf(backendPid: number): number | undefined {
  return readStat(backendPid)?.ppid;
}
