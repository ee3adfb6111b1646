import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHttpsTarget, type HttpsTarget } from '../helpers/https-target.ts';
import { controllablePostgres, type ControllablePostgres } from '../helpers/postgres-control.ts';
import { deliveredBy, fleetEnv, loadCalls, seedTenant, startServe, stopProcess, type Served, type Tenant } from '../helpers/fleet.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// PostgreSQL stopped for three seconds under load, then started again, with
// one `switchboard serve` process (HTTP and delivery worker) on it. Clients
// see 503 with Retry-After (never a 500), /readyz says 503 until the database
// answers, the same process serves again by itself, and every call it
// accepted (201) is delivered afterwards.
describe('a database outage under load', () => {
  let postgres: ControllablePostgres;
  let target: HttpsTarget;
  let served: Served;
  let tenant: Tenant;

  before(async () => {
    postgres = await controllablePostgres();
    process.stdout.write(`# stopping and starting ${postgres.description}\n`);
    target = await startHttpsTarget(() => ({ status: 204 }));
    served = await startServe(fleetEnv(postgres.databaseUrl));
    tenant = await seedTenant(postgres.databaseUrl, served.url, () => `${target.url}/hooks/outage`);
  });
  after(async () => {
    await tenant?.close();
    if (served) await stopProcess(served);
    await target?.close();
    await postgres?.close();
  });

  test('503 + Retry-After during the outage, no 500, the same process recovers, every accepted call is delivered', async () => {
    const load = loadCalls(() => [served.url], tenant.token, 4);
    const readiness: number[] = [];
    let probing = true;
    const probe = (async () => {
      while (probing) {
        readiness.push((await fetch(`${served.url}/readyz`)).status);
        await sleep(200);
      }
    })();

    await sleep(1000);
    await postgres.stop();
    await sleep(3000);
    const during = load.answers.length;
    await postgres.start();
    // The same process answers ready again by itself.
    const deadline = Date.now() + 30_000;
    while ((await fetch(`${served.url}/readyz`)).status !== 200) {
      assert.ok(Date.now() < deadline, 'serve did not become ready again within 30 s');
      await sleep(100);
    }
    await sleep(1000);
    probing = false;
    await probe;
    await load.stop();

    assert.equal(served.child.exitCode, null, `serve exited:\n${served.output()}`);
    const statuses = new Map<number, number>();
    for (const answer of load.answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    const summary = JSON.stringify(Object.fromEntries(statuses));
    process.stdout.write(`# answers by status: ${summary}; /readyz: ${readiness.join(',')}\n`);
    assert.deepEqual(
      [...statuses.keys()].filter((status) => status !== 201 && status !== 503),
      [],
      `only 201 and 503: ${summary}`,
    );
    const unavailable = load.answers.filter((answer) => answer.status === 503);
    assert.ok(unavailable.length > 0, `the load saw the outage: ${summary}`);
    for (const answer of unavailable) {
      assert.equal(answer.code, 'SERVICE_UNAVAILABLE');
      assert.match(String(answer.contentType), /^application\/problem\+json/);
      assert.match(String(answer.retryAfter), /^\d+$/);
    }
    assert.ok(
      load.answers.slice(during).some((answer) => answer.status === 201),
      'calls were accepted again after the restart',
    );
    assert.ok(readiness.includes(503), `/readyz said 503 during the outage: ${readiness.join(',')}`);
    assert.equal(readiness.at(-1), 200);

    // Every accepted call reaches the target (the worker reconnected on its own).
    const accepted = load.answers.flatMap((answer) => (answer.callId ? [answer.callId] : []));
    const waitUntil = Date.now() + 60_000;
    let missing: string[] = accepted;
    while (missing.length > 0 && Date.now() < waitUntil) {
      await sleep(200);
      const delivered = deliveredBy(target.requests).get('/hooks/outage') ?? new Map();
      missing = accepted.filter((id) => !delivered.has(id));
    }
    assert.deepEqual(missing, [], `${missing.length} of ${accepted.length} accepted calls never delivered`);

    // The outage is in the log once per component, not once per refused request.
    const outageLines = served
      .output()
      .split('\n')
      .filter((line) => line.includes('database unreachable'));
    assert.ok(outageLines.length >= 1 && outageLines.length <= 4, `outage log lines: ${outageLines.length}\n${outageLines.join('\n')}`);
    assert.doesNotMatch(served.output(), /unhandled error/);
    // The worker's rounds and its LISTEN connection: one line each per outage, not one per retry.
    const errorLines = served
      .output()
      .split('\n')
      .filter((line) => /"level":(40|50|60)/.test(line));
    assert.ok(errorLines.length <= 8, `${errorLines.length} warning/error lines:\n${errorLines.join('\n')}`);
  });
});
