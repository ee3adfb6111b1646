// One POST to /mcp through the official SDK's server, in its stateless mode:
// nothing is kept between requests, so a client's next request may land on
// another `serve` process. The SDK wants a fresh transport (and so a fresh
// Server) per request; what costs — the tool list, the schemas, the
// validators — is built once (catalogue.ts) and only looked up here.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { IncomingHttpHeaders } from 'node:http';
import type { Metrics } from '../metrics/metrics.ts';
import { VERSION } from '../version.ts';
import { callTool } from './call-tool.ts';
import type { Catalogue } from './catalogue.ts';
import type { ToolContext } from './tools/tool.ts';

const SERVER_INFO = { name: 'switchboard', title: 'Switchboard', version: VERSION };
// The SDK builds a new Ajv instance for every Server it is not given a validator
// for (a third of a tools/call's CPU here); a server uses it only to check what a
// client answers to an elicitation, which Switchboard never asks for: one for all.
const SERVER_OPTIONS = { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: new AjvJsonSchemaValidator() };

function webHeaders(headers: IncomingHttpHeaders): Headers {
  const web = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    web.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return web;
}

export interface McpAnswer {
  status: number;
  headers: Headers;
  body: string;
}

export async function answerMcp(
  catalogue: Catalogue,
  metrics: Metrics,
  ctx: ToolContext,
  request: { url: string; headers: IncomingHttpHeaders; body: unknown },
): Promise<McpAnswer> {
  const server = new Server(SERVER_INFO, SERVER_OPTIONS);
  server.setRequestHandler(ListToolsRequestSchema, () => catalogue.list);
  server.setRequestHandler(CallToolRequestSchema, (call) => callTool(catalogue, metrics, ctx, call.params));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(new Request(request.url, { method: 'POST', headers: webHeaders(request.headers) }), {
      parsedBody: request.body,
    });
    return { status: response.status, headers: response.headers, body: await response.text() };
  } finally {
    await server.close();
  }
}
