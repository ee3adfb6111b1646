// Query parameters on every route of the OpenAPI document, read from the
// document itself so that a new route is walked without a line here
// (docs/security.md, third review, finding 2): on the JSON API a parameter a
// route does not declare is a 400 REQUEST_VALIDATION naming it, and no value of
// one it declares is a 5xx, with a user token and with the platform headers
// wherever the route takes them; the OAuth and operations endpoints answer as
// if the unknown parameters were not there.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { hasStrictQuery } from '../../src/http/reject-undeclared-query.plugin.ts';
import type { TestApp } from '../helpers/app.ts';
import { completeCall, connectPlatform, deliveriesOf, startWebhookApp, subscribeHook } from '../helpers/webhooks.ts';

/** Names a client might try: the call list's internal filters, another tenant's id, paging and sorting of other APIs. */
const UNDECLARED = ['from', 'before', 'afterId', 'agentId', 'organization_id', 'offset', 'sort'];
/** Values no declared parameter takes, and ones that broke a query: an extreme date each way, a 20-digit number. */
const MALFORMED = [
  'abc',
  '',
  '-271821-04-20T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '275760-09-14T00:00:00Z',
  '12345678901234567890',
  '-12345678901234567890',
  `urn:uuid:${randomUUID()}`,
];
/** Values for a declared date-time field of a body: past JavaScript's and PostgreSQL's range, a leap second, year 0. */
const EXTREME_DATES = [
  '-271821-04-20T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '275760-09-14T00:00:00Z',
  '12345678901234567890',
  '9999-12-31T23:59:60Z',
  '0000-01-01T00:00:00Z',
];

interface JsonSchema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  minimum?: number;
  minProperties?: number;
  required?: string[];
  properties?: Record<string, JsonSchema>;
}

interface Operation {
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}

interface Route {
  method: string;
  /** The OpenAPI path, `{id}` filled with an id of the caller's organization. */
  url: string;
  label: string;
  strict: boolean;
  declared: string[];
  body?: JsonSchema;
  credentials: { name: string; headers: Record<string, string> }[];
}

/** The smallest value the schema accepts, so that a request fails on its query string or not at all. */
function example(schema: JsonSchema): unknown {
  if (schema.enum) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.anyOf) return example(schema.anyOf[0]!);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'object') {
    const properties = schema.properties ?? {};
    const names = schema.required?.length ? schema.required : Object.keys(properties).slice(0, schema.minProperties ?? 0);
    return Object.fromEntries(names.map((name) => [name, example(properties[name]!)]));
  }
  if (type === 'string') return schema.format === 'uuid' ? randomUUID() : schema.format === 'date-time' ? new Date().toISOString() : 'x';
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return true;
  return null;
}

function query(params: Record<string, string>): string {
  return `?${new URLSearchParams(params).toString()}`;
}

describe('query parameters of every route', () => {
  let t: TestApp;
  let routes: Route[];
  const problems: string[] = [];

  before(async () => {
    t = await startWebhookApp({ RATE_LIMIT: '100000/min', TOKEN_RATE_LIMIT: '100000/min' });
    const platform = await connectPlatform(t, { scopes: ['calls:read', 'calls:write'] });
    const user = { 'x-user-token': platform.member.token };
    const hook = await subscribeHook(t, platform, { hookUrl: 'https://127.0.0.1:9/hook' });
    const call = await completeCall(t, platform.member);
    const [delivery] = await deliveriesOf(t, hook.id);
    const location = (await t.app.inject({ method: 'POST', url: '/locations', headers: user, payload: { name: 'Depot' } })).json();
    const area = (await t.app.inject({ method: 'POST', url: '/service-areas', headers: user, payload: { label: 'North' } })).json();
    // An id of the caller's own organization for each path, so that a request the validator lets through reaches the data.
    const ids: Record<string, string> = {
      '/calls/': call.id,
      '/locations/': location.id,
      '/service-areas/': area.id,
      '/webhooks/deliveries/': delivery!.id,
      '/webhooks/': hook.id,
    };
    const idFor = (path: string) => Object.entries(ids).find(([prefix]) => path.startsWith(prefix))?.[1] ?? randomUUID();

    await t.app.ready();
    const document = t.app.swagger() as { paths: Record<string, Record<string, Operation>> };
    routes = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => {
        const schemes = new Set((operation.security ?? []).flatMap((requirement) => Object.keys(requirement)));
        const credentials = [
          ...(schemes.has('userToken') || schemes.size === 0 ? [{ name: 'user token', headers: user }] : []),
          ...(schemes.has('bearer') ? [{ name: 'platform headers', headers: platform.headers }] : []),
        ];
        const body = operation.requestBody?.content['application/json']?.schema;
        return {
          method: method.toUpperCase(),
          url: path.replace(/\{[^}]+\}/g, () => idFor(path)),
          label: `${method.toUpperCase()} ${path}`,
          strict: hasStrictQuery({ tags: operation.tags ?? [] }),
          declared: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
          ...(body ? { body } : {}),
          credentials,
        };
      }),
    );
  });
  after(() => t.close());

  async function send(route: Route, headers: Record<string, string>, search: string, body?: unknown) {
    const payload = body ?? (route.body ? example(route.body) : undefined);
    const res = await t.app.inject({
      method: route.method as 'GET',
      url: `${route.url}${search}`,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    if (res.statusCode >= 500) problems.push(`${route.label}${search}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    return res;
  }

  test('the document lists the JSON API, the OAuth and the operations endpoints', () => {
    const labels = routes.map((r) => r.label);
    for (const label of ['GET /calls', 'GET /calls/recent', 'GET /webhooks/{id}/deliveries', 'POST /locations', 'GET /oauth/authorize']) {
      assert.ok(labels.includes(label), label);
    }
    assert.ok(routes.filter((r) => r.strict).length >= 25, 'the JSON API routes');
    assert.deepEqual(
      routes.filter((r) => !r.strict).map((r) => r.label),
      [
        'GET /healthz',
        'GET /readyz',
        'GET /.well-known/oauth-authorization-server',
        'GET /oauth/authorize',
        'POST /oauth/token',
        'POST /oauth/revoke',
        'GET /oauth/userinfo',
        'POST /oauth/userinfo',
        'POST /oauth/register',
        'GET /metrics',
      ],
    );
  });

  test('the JSON API: an undeclared parameter is a 400 REQUEST_VALIDATION naming it, whatever its value', async () => {
    for (const route of routes.filter((r) => r.strict)) {
      for (const { name: credential, headers } of route.credentials) {
        for (const name of UNDECLARED.filter((n) => !route.declared.includes(n))) {
          for (const value of ['abc', '-271821-04-20T00:00:00Z', '12345678901234567890']) {
            const search = query({ [name]: value });
            const res = await send(route, headers, search);
            const context = `${route.label}${search} with the ${credential}: ${res.statusCode} ${res.body.slice(0, 300)}`;
            assert.equal(res.statusCode, 400, context);
            const problem = res.json();
            assert.equal(problem.code, 'REQUEST_VALIDATION', context);
            assert.deepEqual(problem.errors, [{ field: name, message: 'is not an allowed field' }], context);
          }
        }
        // Several at once, next to declared ones: each is named.
        const search = query({ afterId: randomUUID(), sort: 'id', ...Object.fromEntries(route.declared.map((n) => [n, '1'])) });
        const res = await send(route, headers, search);
        assert.equal(res.statusCode, 400, `${route.label}${search}`);
        const fields = (res.json().errors as { field: string }[]).map((e) => e.field);
        assert.ok(fields.includes('afterId') && fields.includes('sort'), `${route.label}${search}: ${res.body}`);
      }
    }
  });

  test('the JSON API: no value of a declared query parameter is a 5xx; a refused one is a 400 naming it', async () => {
    const declared = routes.filter((r) => r.strict && r.declared.length > 0);
    assert.deepEqual(
      declared.map((r) => `${r.label} ${r.declared.join(',')}`),
      [
        'GET /calls/recent limit,direction,location_id,agent_id,min_duration_seconds',
        'GET /calls limit,cursor,status,number,from_number,to_number,direction,agent_id,location_id,since,until',
        'GET /webhooks/{id}/deliveries limit,cursor',
        'GET /audit-events limit,cursor,type,since',
      ],
    );
    for (const route of declared) {
      for (const { name: credential, headers } of route.credentials) {
        for (const name of route.declared) {
          for (const value of MALFORMED) {
            const search = query({ [name]: value });
            const res = await send(route, headers, search);
            const context = `${route.label}${search} with the ${credential}: ${res.statusCode} ${res.body.slice(0, 300)}`;
            assert.ok(res.statusCode < 500, context);
            if (res.statusCode === 400) {
              assert.equal(res.json().code, 'REQUEST_VALIDATION', context);
              assert.ok(
                (res.json().errors as { field: string }[]).some((e) => e.field === name),
                context,
              );
            }
          }
        }
      }
    }
  });

  test('the JSON API: a declared date-time field of a body with an extreme value is a 400 naming it', async () => {
    const dated = routes.flatMap((route) =>
      Object.entries(route.body?.properties ?? {})
        .filter(([, schema]) => schema.format === 'date-time')
        .map(([name]) => ({ route, name })),
    );
    assert.deepEqual(
      dated.map((d) => `${d.route.label} ${d.name}`),
      ['POST /webhooks/{id}/recover since'],
    );
    for (const { route, name } of dated) {
      for (const { name: credential, headers } of route.credentials) {
        for (const value of EXTREME_DATES) {
          const res = await send(route, headers, '', { ...(example(route.body!) as object), [name]: value });
          const context = `${route.label} {${name}: ${value}} with the ${credential}: ${res.statusCode} ${res.body.slice(0, 300)}`;
          assert.equal(res.statusCode, 400, context);
          assert.ok(
            (res.json().errors as { field: string }[]).some((e) => e.field === name),
            context,
          );
        }
      }
    }
  });

  test('GET /calls: the reviewed requests are 400s, and a cursor is always checked', async () => {
    const platform = await connectPlatform(t, { scopes: ['calls:read'] });
    const route = routes.find((r) => r.label === 'GET /calls')!;
    const calls = [];
    for (let i = 0; i < 3; i++) calls.push(await completeCall(t, platform.member)); // one after another: newest last
    for (const headers of [{ 'x-user-token': platform.member.token }, platform.headers]) {
      for (const [name, value] of [
        ['from', 'abc'],
        ['before', 'abc'],
        ['agentId', 'abc'],
        ['afterId', 'abc'],
        ['from', '-271821-04-20T00:00:00Z'],
        ['afterId', calls[2]!.id],
      ] as const) {
        const res = await send(route, headers, query({ [name]: value }));
        assert.equal(res.statusCode, 400, `${name}=${value}: ${res.body}`);
        assert.deepEqual(res.json().errors, [{ field: name, message: 'is not an allowed field' }]);
      }
      // The cursor form of a UUID that PostgreSQL refuses is a 400, not a 500.
      const urn = await send(route, headers, query({ cursor: `urn:uuid:${calls[2]!.id}` }));
      assert.equal(urn.statusCode, 400, urn.body);
      assert.deepEqual(urn.json().errors, [{ field: 'cursor', message: 'must be a UUID' }]);
      // A declared parameter given twice is refused too, not read as either value.
      for (const search of ['?limit=1&limit=2', '?status=completed&status=in_progress']) {
        const twice = await send(route, headers, search);
        assert.equal(twice.statusCode, 400, `${search}: ${twice.body}`);
        assert.equal(twice.json().errors[0].field, search.slice(1, search.indexOf('=')));
      }
      // The declared way through the list still works.
      const page = await send(route, headers, query({ limit: '1', cursor: calls[2]!.id }));
      assert.equal(page.statusCode, 200, page.body);
      assert.deepEqual(
        page.json().map((c: { id: string }) => c.id),
        [calls[1]!.id],
      );
    }
  });

  test('the OAuth and operations endpoints ignore unknown query parameters (RFC 6749 §3.1)', async () => {
    for (const route of routes.filter((r) => !r.strict)) {
      for (const { headers } of route.credentials) {
        const plain = await send(route, headers, '');
        const search = query(Object.fromEntries(UNDECLARED.map((name) => [name, 'abc'])));
        const extra = await send(route, headers, search);
        assert.equal(extra.statusCode, plain.statusCode, `${route.label}${search}: ${extra.body.slice(0, 300)}`);
        assert.doesNotMatch(extra.body, /is not an allowed field/, route.label);
      }
    }
    const metadata = await t.app.inject({ url: `/.well-known/oauth-authorization-server${query({ from: 'abc' })}` });
    assert.equal(metadata.statusCode, 200);
    const health = await t.app.inject({ url: `/healthz${query({ from: 'abc' })}` });
    assert.equal(health.statusCode, 200);
  });

  test('no request above answered 5xx or logged an error', () => {
    assert.deepEqual(problems, []);
    const errors = t.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
    assert.deepEqual(errors, []);
  });
});
