// A body PostgreSQL already wrote as JSON (the one-statement reads,
// app_recent_calls_for_token and app_locations_for_session): sent as it is — Fastify skips the serializer for a string
// with a JSON content type — so the route's response schema documents the
// shape without encoding it a second time.
import type { FastifyReply } from 'fastify';

export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
