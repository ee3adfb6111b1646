// DATA_DIR is made (and found writable) before any database work, one level
// at a time: Node's mkdir({ recursive: true }) never returns for some paths
// (under /proc it keeps retrying a parent that exists), which left the
// process hanging with no output.
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from './config.ts';

const HINT = 'set DATA_DIR to a directory this user may create and write';

function unusable(dir: string, what: string, error: unknown): ConfigError {
  const code = (error as { code?: string }).code ?? (error as Error).message;
  return new ConfigError('DATA_DIR', `${what} ${dir} (${code}); ${HINT}`);
}

async function exists(dir: string): Promise<boolean> {
  try {
    await stat(dir);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return false;
    throw unusable(dir, 'cannot reach', error);
  }
}

/** Creates `dir` and its missing parents; a ConfigError naming DATA_DIR when it cannot be made or written. */
export async function prepareDataDir(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; !(await exists(at)); at = path.dirname(at)) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const level of missing) {
    await mkdir(level).catch((error: unknown) => {
      if ((error as { code?: string }).code !== 'EEXIST') throw unusable(level, 'cannot create', error);
    });
  }
  if (!(await stat(dir)).isDirectory()) throw new ConfigError('DATA_DIR', `${dir} is not a directory; ${HINT}`);
  await access(dir, constants.W_OK | constants.X_OK).catch((error: unknown) => {
    throw unusable(dir, 'cannot write to', error);
  });
}
