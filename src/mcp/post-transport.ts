// The transport of one POST to /mcp, under the SDK's Server (its Transport
// interface): the body Fastify parsed goes in, the JSON answer comes out.
// The SDK's own transports take a WHATWG Request and give a Response
// (StreamableHTTPServerTransport wraps the same one through @hono/node-server),
// and that conversion, both ways, with a stream to read the answer back, was a
// third of a tools/call's CPU. The HTTP rules are the SDK's for a stateless
// server with JSON responses (WebStandardStreamableHTTPServerTransport's
// handlePostRequest, SDK 1.32), the same statuses, codes and messages: test/mcp/post-transport.test.ts
// sends the same requests to both and compares the answers.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type MessageExtraInfo,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { IncomingHttpHeaders } from 'node:http';

/** As the SDK's own transports allow in one batch. */
const MAX_BATCH_SIZE = 100;

export interface PostAnswer {
  status: number;
  /** The JSON text, or none (202: only notifications or responses came). */
  body?: string;
}

function jsonRpcError(status: number, code: number, message: string): PostAnswer {
  return { status, body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }) };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The media type is application/json, parameters and case aside (Fastify's parser for it has already matched). */
function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined || value === 'application/json') return value !== undefined;
  const essence = (value.split(';', 1)[0] ?? '').trim().toLowerCase();
  return essence === 'application/json' && !value.slice(essence.length).includes(',');
}

const isRequest = (message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId; method: string } =>
  'method' in message && 'id' in message;
const isInitialize = (message: JSONRPCMessage) => isRequest(message) && message.method === 'initialize';

/**
 * One request's transport: the Server connects to it, handlePost hands it the
 * messages, and resolves with the answer once every request among them has
 * its response. A notification or request the server sends has nowhere to go
 * (no stream is kept), as with the SDK's transport in JSON mode.
 */
export class PostTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  readonly #responses = new Map<RequestId, JSONRPCMessage | undefined>();
  #answer: ((answer: PostAnswer) => void) | undefined;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!('id' in message) || 'method' in message) return;
    const id = message.id;
    if (id === undefined || !this.#responses.has(id)) throw new Error(`No connection established for request ID: ${String(id)}`);
    this.#responses.set(id, message);
    const responses = [...this.#responses.values()];
    if (responses.some((response) => response === undefined)) return;
    this.#answer?.({ status: 200, body: JSON.stringify(responses.length === 1 ? responses[0] : responses) });
  }

  /** The answer to one POST whose body is already parsed (JSON). */
  handlePost(headers: IncomingHttpHeaders, body: unknown, extra: MessageExtraInfo): Promise<PostAnswer> | PostAnswer {
    const accept = header(headers, 'accept');
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
      return jsonRpcError(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (!isJsonContentType(header(headers, 'content-type'))) {
      return jsonRpcError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
      return jsonRpcError(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    }
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(body) ? body : [body]).map((message) => JSONRPCMessageSchema.parse(message));
    } catch {
      return jsonRpcError(400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    if (messages.some(isInitialize)) {
      if (messages.length > 1) return jsonRpcError(400, -32600, 'Invalid Request: Only one initialization request is allowed');
    } else {
      const version = header(headers, 'mcp-protocol-version');
      if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return jsonRpcError(
          400,
          -32000,
          `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
        );
      }
    }
    if (!messages.some(isRequest)) {
      for (const message of messages) this.onmessage?.(message, extra);
      return { status: 202 };
    }
    return new Promise((resolve) => {
      this.#answer = resolve;
      for (const message of messages) if (isRequest(message)) this.#responses.set(message.id, undefined);
      for (const message of messages) this.onmessage?.(message, extra);
    });
  }
}
