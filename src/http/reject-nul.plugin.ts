// PostgreSQL text cannot hold U+0000, so a string carrying one would fail
// deep in a query as a 500. Refuse it at the edge, naming the field, for
// every route at once instead of in every schema.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ValidationProblem } from './problem-details.plugin.ts';

interface Visit {
  value: unknown;
  key?: string;
  parent?: Visit;
}

function pathOf(visit: Visit, prefix: string[], last?: string): string {
  const keys: string[] = last === undefined ? [] : [last];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) keys.unshift(at.key);
  return [...prefix, ...keys].join('.') || 'body';
}

/**
 * Path of the first string (or key) holding a NUL character, or undefined.
 * Walks with an explicit stack and parent links: a body of 64 KiB can nest
 * ~30 000 levels deep, which would overflow a recursive walk (a 500).
 */
export function findNul(value: unknown, path: string[] = []): string | undefined {
  const pending: Visit[] = [{ value }];
  while (pending.length > 0) {
    const visit = pending.pop()!;
    if (typeof visit.value === 'string') {
      if (visit.value.includes('\u0000')) return pathOf(visit, path);
      continue;
    }
    if (!visit.value || typeof visit.value !== 'object') continue;
    const entries = Array.isArray(visit.value) ? visit.value.map((child, i) => [String(i), child] as const) : Object.entries(visit.value);
    for (const [key] of entries) {
      if (key.includes('\u0000')) return pathOf(visit, path, key.replaceAll('\u0000', '\\u0000'));
    }
    // Reversed so that the first field is looked at first, as a reader would.
    for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i]![1], key: entries[i]![0], parent: visit });
  }
  return undefined;
}

async function rejectNul(app: FastifyInstance) {
  // Callback style, not async: it runs before every route, most of them reads with no body, and a promise per
  // request is measurable there (docs/performance.md, the cost table).
  app.addHook('preValidation', function rejectNulCharacters(request, _reply, done) {
    const field = findNul(request.body) ?? findNul(request.query);
    done(field === undefined ? undefined : new ValidationProblem([{ field, message: 'must not contain NUL (U+0000) characters' }]));
  });
}

export default fp(rejectNul, { name: 'reject-nul' });
