// A registered client (with its secret hash) by client_id, from the process
// cache when it holds it. Authentication itself (the constant-time secret
// comparison) still runs on every request (clients.service.ts).
import type { Queryable } from '../db/pool.ts';
import { findClient, type OAuthClientWithSecret } from '../oauth/clients.queries.ts';
import type { ProcessCaches } from './process-caches.ts';

export async function findClientCached(caches: ProcessCaches, db: Queryable, clientId: string): Promise<OAuthClientWithSecret | undefined> {
  const hit = caches.clients.get(clientId);
  if (hit) return hit;
  const ticket = caches.clients.ticket();
  const client = await findClient(db, clientId);
  if (client) caches.clients.set(clientId, client, [`client:${client.client_id}`], ticket);
  return client;
}
