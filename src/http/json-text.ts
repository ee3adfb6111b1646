// A body PostgreSQL already wrote as JSON (the one-statement reads of
// migration 0010): sent as it is — Fastify skips the serializer for a string
// with a JSON content type — so the route's response schema documents the
// shape without encoding it a second time.
import type { FastifyReply } from 'fastify';

export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
