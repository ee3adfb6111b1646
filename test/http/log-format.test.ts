// LOG_FORMAT=pretty: readable lines for a terminal instead of JSON, from a real
// `switchboard serve`, with every secret still hidden; a bad value stops the
// process naming the variable.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { openLogStream } from '../../src/http/log-format.ts';
import { censorChildBindings, loggerOptions } from '../../src/http/logger.ts';
import { baseEnv, runCli, startServe, type Served } from '../helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

/** Waits until the process has written a line that matches, for at most 30 s. */
async function waitForOutput(served: Served, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!pattern.test(served.output())) {
    if (Date.now() > deadline) assert.fail(`no output matching ${pattern}:\n${served.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('LOG_FORMAT', () => {
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    db = await createTestDatabase();
    env = baseEnv({ DATABASE_URL: db.url, PORT: '0', SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'info' });
  });
  after(() => db.drop());

  test('pretty: serve writes a readable line per request, no JSON, and no secret of the query string', async () => {
    const served = await startServe({ ...env, LOG_FORMAT: 'pretty' }, ['--no-worker']);
    try {
      const answer = await fetch(`${served.url}/no-such-page?token=sk-query-token&code=sk-query-code`, {
        headers: { authorization: 'Bearer sk-bearer', 'x-user-token': 'sk-user-token' },
      });
      assert.equal(answer.status, 404);
      await waitForOutput(served, /no-such-page/);
      const lines = served.output().trimEnd().split('\n');
      const request = lines.find((line) => line.includes('/no-such-page'))!;
      // pino-pretty: "[16:02:11.123] INFO: request completed", then the fields indented below it.
      assert.ok(
        lines.some((line) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request completed$/.test(line)),
        served.output(),
      );
      assert.match(request, /"url": "\/no-such-page\?token=\[redacted\]&code=\[redacted\]"/);
      assert.equal(
        lines.some((line) => line.startsWith('{')),
        false,
        'no JSON line',
      );
      assert.doesNotMatch(served.output(), /sk-/);
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  });

  test('json, the default: one JSON object a line', async () => {
    const served = await startServe(env, ['--no-worker']);
    try {
      await fetch(`${served.url}/no-such-page`);
      await waitForOutput(served, /no-such-page/);
      const line = served
        .output()
        .split('\n')
        .find((l) => l.includes('/no-such-page'))!;
      const parsed = JSON.parse(line) as { msg: string; req: { url: string } };
      assert.equal(parsed.msg, 'request completed');
      assert.equal(parsed.req.url, '/no-such-page');
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  });

  test("pretty: the censor's fields stay hidden in the readable lines", async () => {
    let written = '';
    const capture = new Writable({
      write(chunk, _encoding, callback) {
        written += chunk.toString();
        callback();
      },
    });
    const app = Fastify({ logger: loggerOptions('info', await openLogStream('pretty', capture)) });
    censorChildBindings(app.log);
    app.log.info(
      {
        body: { user: 'ana', password: 'sk-password' },
        client: { client_secret: 'sk-client-secret' },
        headers: { cookie: 'sid=sk-cookie' },
      },
      'fields line',
    );
    app.log.child({ session: { token: 'sk-child-token' } }).warn('child line');
    await app.close();
    assert.match(written, /INFO: fields line/);
    assert.match(written, /"password": "\[redacted\]"/);
    assert.match(written, /WARN: child line/);
    assert.match(written, /"token": "\[redacted\]"/);
    assert.doesNotMatch(written, /sk-/);
  });

  test('a value other than json or pretty stops the process naming LOG_FORMAT', async () => {
    const result = await runCli(['org', 'list'], { ...env, LOG_FORMAT: 'fancy' });
    assert.equal(result.code, 78);
    assert.equal(result.stderr, 'switchboard: LOG_FORMAT: must be json or pretty, got "fancy"\n');
  });
});
