// tools/call: validate the arguments against the tool's schema, run it in a
// span of its own (the tool's name, never its arguments), count it. An
// expected failure (a validation error, not found, a limit) is a tool result
// with isError and the problem's detail, which the model can read and act on;
// only an unexpected error becomes a JSON-RPC error.
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fieldErrorsFromAjv } from '../http/problem-details.plugin.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { activeTracing } from '../tracing/tracing.ts';
import type { Catalogue } from './catalogue.ts';
import type { ToolContext } from './tools/tool.ts';

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** A refusal the REST route would answer with a 4xx: its detail is for the caller. */
function expectedFailure(error: unknown): string | undefined {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? (error as Error).message : undefined;
}

async function runTool(catalogue: Catalogue, ctx: ToolContext, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const entry = catalogue.byName.get(name);
  if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  if (!entry.validate(args)) {
    const problems = fieldErrorsFromAjv(entry.validate.errors as Parameters<typeof fieldErrorsFromAjv>[0], 'arguments');
    return errorResult(`Invalid arguments: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);
  }
  try {
    const answer = await entry.tool.run(ctx, args);
    return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.structured };
  } catch (error) {
    const detail = expectedFailure(error);
    if (detail === undefined) throw error;
    return errorResult(detail);
  }
}

export async function callTool(
  catalogue: Catalogue,
  metrics: Metrics,
  ctx: ToolContext,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
): Promise<CallToolResult> {
  const args = params.arguments ?? {};
  const known = catalogue.byName.has(params.name) ? params.name : 'unknown';
  const tracing = activeTracing();
  try {
    const result = tracing
      ? await tracing.child('mcp tools/call', { 'gen_ai.tool.name': known }, () => runTool(catalogue, ctx, params.name, args))
      : await runTool(catalogue, ctx, params.name, args);
    metrics.mcpToolCalls.inc({ tool: known, outcome: result.isError ? 'error' : 'ok' });
    return result;
  } catch (error) {
    metrics.mcpToolCalls.inc({ tool: known, outcome: 'failed' });
    throw error;
  }
}
