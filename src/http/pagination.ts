// Lists that page return a plain JSON array (like /locations and
// /calls/recent) and point to the next page with an RFC 8288 Link header,
// the way GitHub's API does: `Link: <…?cursor=…&limit=…>; rel="next"`.
import type { FastifyReply, FastifyRequest } from 'fastify';

export function setNextLink(request: FastifyRequest, reply: FastifyReply, baseUrl: string, nextCursor: string | null): void {
  if (nextCursor === null) return;
  const url = new URL(request.url, `${baseUrl}/`);
  url.searchParams.set('cursor', nextCursor);
  reply.header('link', `<${baseUrl}${url.pathname}${url.search}>; rel="next"`);
}
