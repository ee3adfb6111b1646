// Runs the real `switchboard` executable as a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/switchboard.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...extra };
  if (process.env.NODE_EXTRA_CA_CERTS) env.NODE_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  // The test run's shared compile cache (scripts/test.ts): a command starts without compiling every module again.
  if (process.env.NODE_COMPILE_CACHE) env.NODE_COMPILE_CACHE = process.env.NODE_COMPILE_CACHE;
  return env;
}

/** Runs a command to its end; with `timeoutMs`, one still running then is killed (code null). */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number, bin = BIN): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // 'close', not 'exit': a process can have exited before its output was all read from the pipes.
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a CLI command with --json and returns the parsed object (asserting success). */
export async function cliJson<T = Record<string, unknown>>(args: string[], env: NodeJS.ProcessEnv, bin = BIN): Promise<T> {
  const result = await runCli([...args, '--json'], env, undefined, bin);
  if (result.code !== 0) throw new Error(`switchboard ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A DATA_DIR that PostgreSQL (run as `postgres` when we are root) can reach. */
export async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-data-'));
  await chmod(dir, 0o755);
  return dir;
}

export interface Served {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `switchboard serve` (the given executable, this checkout's by default) in its own process group and waits until it listens. */
export function startServe(env: NodeJS.ProcessEnv, args: string[] = [], bin = BIN): Promise<Served> {
  const child = spawn(process.execPath, [bin, 'serve', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Switchboard listening on (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${output}`));
    });
  });
}

/** PIDs of PostgreSQL processes whose command line mentions dir. */
export async function postgresProcessesFor(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('postgres') && cmdline.includes(dir)) pids.push(Number(entry));
  }
  return pids;
}
