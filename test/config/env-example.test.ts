// .env.example lists exactly the variables of the registry (docs/configuration.md),
// each with its real default, and works as the docs say: copied to a file
// that `node --env-file` reads.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { SETTINGS } from '../../src/config/settings/index.ts';
import { BIN, baseEnv } from '../helpers/cli.ts';
import { spawnSync } from 'node:child_process';

const ROOT = new URL('../../', import.meta.url);

/** `# NAME=value` lines of .env.example: each variable with the value it shows. */
async function exampleEntries(): Promise<[string, string][]> {
  const example = await readFile(new URL('.env.example', ROOT), 'utf8');
  return [...example.matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((match) => [match[1]!, match[2]!]);
}

describe('.env.example', () => {
  test('names every variable of the registry, and no other, once each', async () => {
    const documented = Object.keys(SETTINGS);
    const listed = (await exampleEntries()).map(([name]) => name);
    assert.deepEqual([...listed].sort(), [...new Set(listed)].sort(), 'each variable once');
    assert.deepEqual([...listed].sort(), [...documented].sort());
  });

  test('every value it shows is the default: uncommented as is, the configuration is that of an empty environment', async () => {
    const env = Object.fromEntries(await exampleEntries());
    assert.deepEqual(loadConfig(env), loadConfig({}));
  });

  test('as the README says: copied to a file, `node --env-file` gives its variables to the command, the environment winning', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-env-'));
    try {
      const example = await readFile(new URL('.env.example', ROOT), 'utf8');
      const file = path.join(dir, '.env');
      // Uncommented and changed as a user would: a value the command refuses shows that it was read.
      await writeFile(file, example.replace('# LOG_FORMAT=json', 'LOG_FORMAT=fancy').replace('# PORT=3000', 'PORT=abc'));
      const run = (env: Record<string, string>) =>
        spawnSync(process.execPath, [`--env-file=${file}`, BIN, 'org', 'list'], { env: baseEnv(env), encoding: 'utf8' });
      const fromFile = run({});
      assert.equal(fromFile.status, 78);
      assert.equal(fromFile.stderr, 'switchboard: PORT: must be a whole number from 0 to 65535, got "abc"\n');
      const environmentWins = run({ PORT: '3000' });
      assert.equal(environmentWins.status, 78);
      assert.equal(environmentWins.stderr, 'switchboard: LOG_FORMAT: must be json or pretty, got "fancy"\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
