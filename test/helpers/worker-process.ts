// A real `switchboard worker` process against a test database, for tests that
// kill workers or run several of them.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestApp } from './app.ts';
import { WEBHOOK_TEST_ENV } from './webhooks.ts';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/switchboard.js');

export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function spawnWorker(t: TestApp, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: {
      ...process.env,
      ...WEBHOOK_TEST_ENV,
      DATABASE_URL: t.db.url,
      SECRET_KEY: t.config.secretKey!.toString('base64'),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    // A worker that does not start in time is killed: the caller never gets it to kill, and its pipes would hold the test process open.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker did not start within 20 s:\n${output}`));
    }, 20_000);
    const onData = () => {
      if (!output.includes('Switchboard worker running')) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve();
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before starting:\n${output}`));
    });
  });
  return {
    child,
    output: () => output,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
