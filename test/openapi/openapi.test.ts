// The OpenAPI document and its rendered reference page (docs/interface.md §9),
// read the way a client generator or a newcomer reads them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

// The parts of the OpenAPI 3 document these tests read.
interface Schema {
  type?: string;
  format?: string;
  description?: string;
  pattern?: string;
  enum?: string[];
  required?: string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema: Schema;
}
interface Content {
  description?: string;
  content?: Record<string, { schema: Schema }>;
}
interface Operation {
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  requestBody?: Content;
  responses?: Record<string, Content>;
}
type Paths = Record<string, Record<string, Operation>>;
interface OpenApiDocument {
  paths: Paths;
  components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; description?: string }> };
}

/** The application/json schema of a request body or response, which must be there. */
function jsonSchema(body: Content | undefined): Schema {
  const schema = body?.content?.['application/json']?.schema;
  assert.ok(schema, 'an application/json schema');
  return schema;
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let paths: Paths;
  before(async () => {
    t = await startTestApp();
    paths = (await t.app.inject({ url: '/openapi.json' })).json<OpenApiDocument>().paths;
  });
  after(() => t.close());

  test('health, readiness and metrics are listed', () => {
    assert.ok(paths['/healthz']?.get);
    assert.ok(paths['/readyz']?.get);
    assert.ok(paths['/metrics']?.get);
  });

  test('a query parameter with a default is optional', () => {
    const limit = (path: string) => paths[path]!.get!.parameters!.find((p) => p.name === 'limit')!;
    assert.equal(limit('/calls/recent').required, false);
    assert.equal(limit('/calls').required, false);
    assert.equal(limit('/webhooks/{id}/deliveries').required, false);
  });

  test('platform routes need the bearer token and both client headers together', async () => {
    const schemes = (await t.app.inject({ url: '/openapi.json' })).json<OpenApiDocument>().components.securitySchemes;
    assert.deepEqual(schemes.clientId, {
      type: 'apiKey',
      in: 'header',
      name: 'x-client-id',
      description: 'the OAuth client the bearer token was issued to',
    });
    assert.equal(schemes.clientSecret?.name, 'x-client-secret');
    for (const [path, method] of [
      ['/calls/recent', 'get'],
      ['/webhooks/subscribe', 'post'],
      ['/webhooks/subscribe', 'delete'],
    ] as const) {
      assert.deepEqual(paths[path]![method]!.security, [{ bearer: [], clientId: [], clientSecret: [] }], `${method} ${path}`);
    }
  });

  test('recover lists its body schema, its answer and every error it can give', () => {
    const recover = paths['/webhooks/{id}/recover']?.post;
    assert.ok(recover, 'POST /webhooks/{id}/recover is listed');
    assert.deepEqual(
      recover.parameters!.map((p) => p.name),
      ['id'],
    );
    const body = jsonSchema(recover.requestBody);
    assert.deepEqual(body.required, ['since']);
    assert.equal(body.properties?.since?.format, 'date-time');
    assert.equal(body.additionalProperties, false);
    assert.deepEqual(Object.keys(recover.responses!).sort(), ['202', '400', '401', '403', '404', '409', '429']);
    assert.deepEqual(Object.keys(jsonSchema(recover.responses?.['202']).properties ?? {}).sort(), [
      'more',
      'requeued',
      'since',
      'subscription_id',
    ]);
    assert.deepEqual(recover.security, paths['/webhooks/{id}']!.get!.security, 'the same credentials as the other /webhooks/{id} routes');
  });

  test('a subscription documents its circuit: each field with a description', () => {
    const [path, method, status] = ['/webhooks/{id}', 'get', '200'] as const;
    const subscription = jsonSchema(paths[path]![method]!.responses?.[status]);
    assert.ok(subscription.required?.includes('circuit'));
    const circuit = subscription.properties?.circuit;
    assert.ok(circuit?.properties && circuit.required, 'the circuit is an object with required fields');
    assert.match(String(circuit.description), /circuit breaker/);
    assert.deepEqual(Object.keys(circuit.properties).sort(), [
      'concurrency_limit',
      'consecutive_failures',
      'next_probe_at',
      'since',
      'state',
    ]);
    assert.deepEqual([...circuit.required].sort(), Object.keys(circuit.properties).sort());
    for (const [name, field] of Object.entries(circuit.properties)) assert.ok(field.description, `circuit.${name} has a description`);
    assert.deepEqual(
      circuit.properties.state?.anyOf?.flatMap((s) => s.enum),
      ['closed', 'open', 'probing'],
    );
    assert.match(String(circuit.properties.state?.description), /probing: that wait is over/);
    const listed = jsonSchema(paths['/webhooks']!.get!.responses?.['200']).items;
    assert.deepEqual(listed?.properties?.circuit, circuit, 'GET /webhooks lists the same shape');
  });

  test('both calls writes document the Idempotency-Key header and its 409 and 422 answers', () => {
    for (const path of ['/calls', '/calls/{id}/complete']) {
      const operation = paths[path]!.post!;
      const header = operation.parameters!.find((p) => p.in === 'header' && p.name === 'idempotency-key');
      assert.ok(header, `${path}: the header parameter`);
      assert.equal(header.required, false);
      assert.ok(header.schema.pattern);
      assert.match(String(header.description ?? header.schema.description), /same key and the same body/);
      assert.ok(operation.responses!['409'], `${path}: 409`);
      assert.match(String(operation.responses!['409']?.description), /IDEMPOTENCY_KEY_IN_PROGRESS/);
      assert.match(String(operation.responses!['422']?.description), /IDEMPOTENCY_KEY_REUSED/);
      assert.ok(jsonSchema(operation.responses!['422']).properties?.code);
    }
  });

  test('the authorize endpoint documents its query parameters but still answers errors by redirect', async () => {
    const names = paths['/oauth/authorize']!.get!.parameters!.map((p) => p.name).sort();
    assert.deepEqual(names, [
      'client_id',
      'code_challenge',
      'code_challenge_method',
      'redirect_uri',
      'resource',
      'response_type',
      'scope',
      'state',
    ]);
    const res = await t.app.inject({ url: '/oauth/authorize?response_type=token' });
    assert.equal(res.statusCode, 400);
    assert.match(String(res.headers['content-type']), /^text\/html/);
  });
});
