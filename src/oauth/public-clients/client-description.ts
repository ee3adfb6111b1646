// What the consent page says about who is asking: a self-registered client's
// name is whatever it chose, so the page also shows where it lives (the host
// of its metadata document, or of its redirect) and that nobody vetted it.
import type { ClientDescription } from '../../web/pages/consent.page.ts';
import type { OAuthClient } from '../clients.queries.ts';
import { isLoopbackRedirect } from '../redirect-uri.ts';

export const LOOPBACK_DESCRIPTION = 'an app on this computer';

export function describeClient(client: Pick<OAuthClient, 'name' | 'kind' | 'client_id'>, redirectUri: string): ClientDescription {
  const redirectHost = isLoopbackRedirect(redirectUri) ? LOOPBACK_DESCRIPTION : new URL(redirectUri).host;
  if (client.kind === 'metadata_document') return { name: client.name, from: new URL(client.client_id).host, verified: false };
  return { name: client.name, from: redirectHost, verified: client.kind === 'platform' };
}
