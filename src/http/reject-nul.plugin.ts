// PostgreSQL text cannot hold U+0000, so a string carrying one would fail
// deep in a query as a 500. Refuse it at the edge, naming the field, for
// every route at once instead of in every schema.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ValidationProblem } from './problem-details.plugin.ts';

/** Path of the first string (or key) holding a NUL character, or undefined. */
export function findNul(value: unknown, path: string[] = []): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') || 'body' : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...path, String(i)]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key.includes('\u0000')) return [...path, key.replace(/\u0000/g, '\\u0000')].join('.');
      const found = findNul(child, [...path, key]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

async function rejectNul(app: FastifyInstance) {
  app.addHook('preValidation', async function rejectNulCharacters(request) {
    const field = findNul(request.body) ?? findNul(request.query);
    if (field !== undefined) throw new ValidationProblem([{ field, message: 'must not contain NUL (U+0000) characters' }]);
  });
}

export default fp(rejectNul, { name: 'reject-nul' });
