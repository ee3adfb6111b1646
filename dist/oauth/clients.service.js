// OAuth clients are registered by operators (DESIGN §4 `switchboard client …`).
// The secret is random, shown once, and kept only as its SHA-256 hash.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { generateToken, hashToken } from '../auth/tokens.js';
import { deleteClient as deleteClientRow, findClient, insertClient, listClients as listClientRows, updateClientSecret, } from './clients.queries.js';
import { redirectUriProblem } from './redirect-uri.js';
import { isSupportedScope, normalizeScopes, SUPPORTED_SCOPES } from './scopes.js';
export class ClientInputError extends Error {
}
export function toClientView(client) {
    return {
        client_id: client.client_id,
        name: client.name,
        redirect_uris: client.redirect_uris,
        scopes: client.scopes,
        created_at: client.created_at.toISOString(),
    };
}
/** A public identifier: 128 random bits, hex so it needs no escaping anywhere (Basic auth, URLs, headers). */
function generateClientId() {
    return randomBytes(16).toString('hex');
}
export async function createClient(db, input) {
    const name = input.name.trim();
    if (name.length < 1 || name.length > 200)
        throw new ClientInputError('--name must be 1 to 200 characters');
    if (input.redirectUris.length === 0)
        throw new ClientInputError('--redirect-uri is required (repeat it for several)');
    for (const uri of input.redirectUris) {
        const problem = redirectUriProblem(uri);
        if (problem)
            throw new ClientInputError(`--redirect-uri "${uri}" ${problem}`);
    }
    const scopes = input.scopes ?? SUPPORTED_SCOPES;
    const unknown = scopes.filter((s) => !isSupportedScope(s));
    if (unknown.length > 0)
        throw new ClientInputError(`--scopes: unknown scope ${unknown.join(', ')}; supported: ${SUPPORTED_SCOPES.join(' ')}`);
    if (scopes.length === 0)
        throw new ClientInputError('--scopes must name at least one scope');
    const clientSecret = generateToken('sbs');
    const client = await insertClient(db, {
        clientId: generateClientId(),
        secretHash: hashToken(clientSecret),
        name,
        redirectUris: [...new Set(input.redirectUris)],
        scopes: normalizeScopes(scopes),
    });
    return { client, client_id: client.client_id, client_secret: clientSecret, redirect_uris: client.redirect_uris, scopes: client.scopes };
}
export async function listClients(db) {
    return (await listClientRows(db)).map(toClientView);
}
/** Deleting a client deletes its grants, codes and tokens with it (ON DELETE CASCADE). */
export function deleteClient(db, clientId) {
    return deleteClientRow(db, clientId);
}
/** A new secret; the old one stops working at once. Issued tokens stay valid. */
export async function rotateClientSecret(db, clientId) {
    const clientSecret = generateToken('sbs');
    const client = await updateClientSecret(db, clientId, hashToken(clientSecret));
    return client ? { client_id: client.client_id, client_secret: clientSecret } : undefined;
}
/** Constant-time check of a presented secret against the stored hash. */
export function secretMatches(secretHash, presented) {
    return timingSafeEqual(secretHash, hashToken(presented));
}
/** The client when both id and secret are right; undefined otherwise (no hint which one was wrong). */
export async function authenticateClient(db, clientId, clientSecret) {
    if (clientId.length > 200 || clientSecret.length > 500)
        return undefined;
    const client = await findClient(db, clientId);
    // Hash even for an unknown client so both failures take the same time.
    const ok = secretMatches(client?.secret_hash ?? Buffer.alloc(32), clientSecret);
    return client && ok ? client : undefined;
}
export { findClient };
//# sourceMappingURL=clients.service.js.map