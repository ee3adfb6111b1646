// docs/configuration.md is written from the registry (`npm run docs:config`),
// as db/schema.sql is from the migrations: a variable added, a default or a
// meaning changed without regenerating it fails here. `serve --help` and the
// error of a bad value take their text from the same declarations.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { plain } from '../../src/config/kinds.ts';
import { configurationDoc } from '../../src/config/configuration-doc.ts';
import { SETTINGS } from '../../src/config/settings/index.ts';
import { BIN, baseEnv } from '../helpers/cli.ts';

describe('docs/configuration.md', () => {
  test('is what `npm run docs:config` writes from the registry', async () => {
    const file = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    assert.equal(file, configurationDoc(), 'run `npm run docs:config` and commit docs/configuration.md');
  });

  test('lists every variable of the registry with what it accepts', () => {
    const doc = configurationDoc();
    for (const [name, declared] of Object.entries(SETTINGS)) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      assert.ok(row, `${name} has a row`);
      assert.ok(row.includes(declared.kind.accepts.replace(/\|/g, '\\|')), `${name}'s row says what it accepts`);
    }
  });

  test('every default the registry declares is accepted by its own parser', () => {
    for (const [name, declared] of Object.entries(SETTINGS)) {
      if (declared.default !== undefined && !declared.readBySdk) declared.kind.parse(declared.default, name);
    }
    loadConfig({});
  });

  test('`switchboard serve --help` lists every variable; a bad value quotes what the registry says it accepts', () => {
    const help = spawnSync(process.execPath, [BIN, 'serve', '--help'], { env: baseEnv({}), encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    for (const name of Object.keys(SETTINGS)) assert.match(help.stdout, new RegExp(`^  ${name} `, 'm'), name);
    const bad = spawnSync(process.execPath, [BIN, 'org', 'list'], { env: baseEnv({ AUDIT_RETENTION: '1h' }), encoding: 'utf8' });
    assert.equal(bad.status, 78);
    assert.equal(bad.stderr, `switchboard: AUDIT_RETENTION: must be ${plain(SETTINGS.AUDIT_RETENTION.kind.accepts)}, got "1h"\n`);
  });
});
