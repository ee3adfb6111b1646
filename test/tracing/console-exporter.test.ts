// OTEL_TRACES_EXPORTER=console writes spans to stderr: stdout stays what
// LOG_FORMAT=json promises, one JSON object a line.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { BIN } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { fleetEnv } from '../helpers/fleet.ts';
import { waitFor } from '../helpers/webhooks.ts';

describe('OTEL_TRACES_EXPORTER=console', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  test('spans go to stderr; every stdout line is one JSON object', async () => {
    const env = fleetEnv(db.url, { LOG_LEVEL: 'info', OTEL_TRACES_EXPORTER: 'console', OTEL_BSP_SCHEDULE_DELAY: '100' });
    const child = spawn(process.execPath, [BIN, 'serve', '--no-worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    try {
      const url = await waitFor('serve listening', async () => /Switchboard listening on (\S+)/.exec(stdout)?.[1], 60_000);
      assert.equal((await fetch(`${url}/calls/recent`)).status, 401);
      await waitFor("the request's span on stderr", async () => /name: 'GET \/calls\/recent'/.test(stderr), 20_000);
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    // The start-up and shutdown banners are the lines meant for a person (the doc tests wait for them).
    const banner = /^(Switchboard listening on |SIG[A-Z]+ received, shutting down$)/;
    const lines = stdout.split('\n').filter((line) => line !== '' && !banner.test(line));
    assert.ok(lines.length >= 2, stdout);
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `a JSON line: ${line}`);
    assert.ok(
      lines.some((line) => line.includes('"url":"/calls/recent"')),
      'the request was logged on stdout',
    );
    assert.doesNotMatch(stdout, /traceId:/);
  });
});
