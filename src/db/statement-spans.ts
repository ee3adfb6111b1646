// A span per PostgreSQL statement while trace export is on (src/tracing),
// made where every query passes (pool.ts, PreparingClient): named by the
// statement, never by its values. A statement's name is the one it was given
// (namedStatement, a pg query's `name`); a query named only by its hash gets
// a summary of its text instead: its first keyword and first table
// ("INSERT calls", "SELECT webhook_attempts"), never a literal.
import type { Tracing } from '../tracing/tracing.ts';

/** pg's own names for a text (pool.ts statementName): a hash, which says nothing to a reader. */
const HASHED = /^sb_/;
const KEYWORD = /^\s*(?:--[^\n]*\n\s*)*([A-Za-z]+)/;
const TABLE = /\b(?:FROM|INTO|UPDATE|JOIN)\s+([a-z_][a-z0-9_]*)/i;
const summaries = new Map<string, string>();

/** The span name of a statement: its name, or a summary of its text. */
export function statementSpanName(name: string | undefined, text: string): string {
  if (name !== undefined && !HASHED.test(name)) return name;
  let summary = summaries.get(text);
  if (summary === undefined) {
    const keyword = KEYWORD.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
    const table = TABLE.exec(text)?.[1];
    summary = table ? `${keyword} ${table}` : keyword;
    // The texts are the constants of the *.queries.ts files, and the few inlined ones carry only checked ids: the map stays small.
    if (summaries.size < 10_000) summaries.set(text, summary);
  }
  return summary;
}

type Callback = (error: Error | null, result: unknown) => void;

/** Runs pg's query(...args) inside a statement span (callback or promise form); a submittable (a cursor) runs untraced. */
export function tracedQuery(tracing: Tracing, args: unknown[], query: (args: unknown[]) => unknown): unknown {
  const [first] = args;
  let name: string | undefined;
  let text: string;
  if (typeof first === 'string') text = first;
  else if (first !== null && typeof first === 'object' && !('submit' in first) && typeof (first as { text?: unknown }).text === 'string') {
    text = (first as { text: string }).text;
    name = (first as { name?: string }).name;
  } else return query(args);
  return tracing.statement(statementSpanName(name, text), (end) => {
    const last = args.at(-1);
    if (typeof last === 'function') {
      const callback = last as Callback;
      return query([
        ...args.slice(0, -1),
        (error: Error | null, result: unknown) => {
          end(error ?? undefined);
          callback(error, result);
        },
      ]);
    }
    const answer = query(args) as Promise<unknown>;
    answer.then(
      () => end(),
      (error: unknown) => end(error),
    );
    return answer;
  });
}
