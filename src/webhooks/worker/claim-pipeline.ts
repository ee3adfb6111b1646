// How the claim's statements reach PostgreSQL (claim.queries.ts): prepared
// once per connection, then sent as EXECUTEs, several in one message, their
// results read back by step name, never by position.
import { type NamedStatement, type ParameterTypes, prepareText } from '../../db/named-statement.ts';
import type { DeadlineQueryConfig, PoolClient } from '../../db/pool.ts';

export interface Result<Row> {
  rows: Row[];
}

/**
 * Statements sent as one simple query (one message, one round trip; several
 * statements allowed), each under a step name; their results come back by
 * those names. Fails after `deadlineMs` without an answer (no deadline when unset).
 */
export async function pipeline<Name extends string>(
  client: PoolClient,
  steps: readonly (readonly [Name, string])[],
  deadlineMs: number | undefined,
): Promise<Record<Name, Result<unknown>>> {
  const config: DeadlineQueryConfig = { text: steps.map(([, sql]) => sql).join(';\n'), query_timeout: deadlineMs };
  const answer = (await client.query(config)) as unknown as Result<unknown> | Result<unknown>[];
  const results = Array.isArray(answer) ? answer : [answer];
  if (results.length !== steps.length) throw new Error(`claim: ${steps.length} statements sent, ${results.length} results`);
  return Object.fromEntries(steps.map(([name], i) => [name, results[i]!])) as Record<Name, Result<unknown>>;
}

/**
 * The claim's statements are prepared once per connection (PREPARE, so they
 * are planned once, not on every claim: planning the live-grant join costs
 * more than running the claim). Per connection, the names prepared on it
 * (the cap is part of a statement's text and name).
 */
const PREPARED = new WeakMap<object, Set<string>>();
const DUPLICATE_PREPARED_STATEMENT = '42P05';

export async function ensurePrepared(
  client: PoolClient,
  statements: readonly NamedStatement<ParameterTypes>[],
  deadlineMs: number | undefined,
): Promise<void> {
  const prepared = PREPARED.get(client) ?? new Set<string>();
  const missing = statements.filter((statement) => !prepared.has(statement.name));
  if (missing.length === 0) return;
  try {
    await pipeline(
      client,
      missing.map((statement) => [statement.name, prepareText(statement)] as const),
      deadlineMs,
    );
  } catch (error) {
    if ((error as { code?: string }).code !== DUPLICATE_PREPARED_STATEMENT) throw error;
  }
  for (const statement of missing) prepared.add(statement.name);
  PREPARED.set(client, prepared);
}
