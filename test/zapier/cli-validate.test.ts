// `zapier-platform validate --without-style` on zapier/, run by the Zapier CLI
// itself (npm package zapier-platform-cli), which needs Node.js 22 or later and
// is not a dependency of this repository (zapier/README.md, "Configure and
// check"). It runs when the CLI is found: ZAPIER_PLATFORM_CLI names its
// executable (CI's Node 24 pass installs it and sets it; set but missing is a
// failure), else `zapier-platform` on PATH; otherwise, or on Node 20, it is
// skipped with the reason. `--without-style` keeps it offline.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ZAPIER_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'zapier');
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

const configured = process.env.ZAPIER_PLATFORM_CLI;
const cli = configured || onPath('zapier-platform');
const skip =
  NODE_MAJOR < 22
    ? `the Zapier CLI needs Node.js 22 or later (this is ${process.versions.node})`
    : cli === undefined
      ? 'the Zapier CLI is not installed (set ZAPIER_PLATFORM_CLI, or put zapier-platform on PATH)'
      : false;

function run(file: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // The CLI's script, run by this very Node.js (its #! line would take whatever `node` PATH finds first).
    const child = spawn(process.execPath, [file, ...args], {
      cwd: ZAPIER_DIR,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the Zapier CLI validates the app', () => {
  test('`zapier-platform validate --without-style` finds no structural error', { skip, timeout: 120_000 }, async () => {
    const script = realpathSync(cli!);
    const { code, output } = await run(script, ['validate', '--without-style', '--format', 'json']);
    assert.equal(code, 0, output);
    // With --format json the structural errors are a JSON array, printed after "Validating project locally".
    const errors = JSON.parse(output.slice(output.indexOf('['), output.lastIndexOf(']') + 1)) as unknown[];
    assert.deepEqual(errors, [], output);
  });
});
