// One POST to /mcp through the official SDK's server, in its stateless mode:
// nothing is kept between requests, so a client's next request may land on
// another `serve` process. A Server holds one connection (the SDK's Protocol
// refuses a second connect), so each request has its own, connected to its
// own transport (post-transport.ts); what costs — the tool list, the schemas,
// the validators — is built once (catalogue.ts) and only looked up here.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { IncomingHttpHeaders } from 'node:http';
import type { Metrics } from '../metrics/metrics.ts';
import { VERSION } from '../version.ts';
import { callTool } from './call-tool.ts';
import type { Catalogue } from './catalogue.ts';
import { type PostAnswer, PostTransport } from './post-transport.ts';
import type { ToolContext } from './tools/tool.ts';

const SERVER_INFO = { name: 'switchboard', title: 'Switchboard', version: VERSION };
// The SDK builds a new Ajv instance for every Server it is not given a validator
// for (a third of a tools/call's CPU here); a server uses it only to check what a
// client answers to an elicitation, which Switchboard never asks for: one for all.
const SERVER_OPTIONS = { capabilities: { tools: { listChanged: false } }, jsonSchemaValidator: new AjvJsonSchemaValidator() };

export type McpAnswer = PostAnswer;

export async function answerMcp(
  catalogue: Catalogue,
  metrics: Metrics,
  ctx: ToolContext,
  request: { headers: IncomingHttpHeaders; body: unknown },
): Promise<McpAnswer> {
  const server = new Server(SERVER_INFO, SERVER_OPTIONS);
  server.setRequestHandler(ListToolsRequestSchema, () => catalogue.list);
  server.setRequestHandler(CallToolRequestSchema, (call) => callTool(catalogue, metrics, ctx, call.params));
  const transport = new PostTransport();
  await server.connect(transport);
  // Not closed after: the answer waits for every response, so no handler is left
  // to abort, and closing costs an Error (with its stack) in the SDK each time.
  return transport.handlePost(request.headers, request.body, { requestInfo: { headers: request.headers } });
}
