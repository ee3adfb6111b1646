// Runs the baseline of the delivery benches (bench/floors/raw-post-loop.js) in its
// own process: bench:delivery and bench/floors/delivery-floor.ts time the same POSTs
// to the same receivers without Switchboard.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The baseline in its own process (bench/floors/raw-post-loop.js): `warmUp` untimed
 * requests first, as many as the worker is sent before it is timed, then
 * `total` timed ones. `onWarm` runs when the warm-up is over.
 */
export function runRawLoop(
  urls: string[],
  load: { total: number; concurrency: number; bodyBytes: number; warmUp: number },
  env: NodeJS.ProcessEnv,
  onWarm: () => void = () => {},
): Promise<{ latencies: number[]; elapsedMs: number; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    const argv = [JSON.stringify(urls), load.total, load.concurrency, load.bodyBytes, load.warmUp].map(String);
    const child = spawn(process.execPath, [path.join(ROOT, 'bench/floors/raw-post-loop.js'), ...argv], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let warm = false;
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      if (!warm && out.includes('\n')) {
        warm = true;
        onWarm();
        out = out.slice(out.indexOf('\n') + 1);
      }
    });
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`raw loop exited with ${code}`))));
  });
}
