// One MCP tool: its contract (name, schemas, annotations, the scope it needs)
// and what it does, on the services the REST routes use (never rules of its own).
import type { Static, TSchema } from '@sinclair/typebox';
import type { Principal } from '../../auth/principal.ts';
import type { Caches } from '../../cache/caches.ts';
import type { Config } from '../../config/config.ts';
import type { Pool } from '../../db/pool.ts';
import type { Scope } from '../../oauth/scopes.ts';

export interface ToolContext {
  pool: Pool;
  caches: Caches;
  config: Config;
  principal: Principal;
}

/** The structured result (checked against the output schema by clients) and its words for a person. */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  text: string;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  scope: Scope;
  input: TSchema;
  output: TSchema;
  /** MCP tool annotations: readOnlyHint, destructiveHint, idempotentHint. */
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };
  run(ctx: ToolContext, args: Record<string, unknown>): Promise<ToolAnswer>;
}

export function defineTool<I extends TSchema>(
  tool: Omit<Tool, 'input' | 'run'> & { input: I; run(ctx: ToolContext, args: Static<I>): Promise<ToolAnswer> },
): Tool {
  return tool as Tool;
}

export const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;
export const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false } as const;
export const UPDATE = { readOnlyHint: false, destructiveHint: false, idempotentHint: true } as const;
export const DELETE = { readOnlyHint: false, destructiveHint: true, idempotentHint: true } as const;

/** "1 call" / "3 calls". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
