// RFC 6749 §4.1.3: the code must have been issued to the authenticated client.
import { InvalidGrant } from '../oauth.errors.ts';
import type { CodeExchangeCheck } from './context.ts';

export const checkCodeClient: CodeExchangeCheck = function checkCodeClient(ctx) {
  if (ctx.code.client_id !== ctx.client.client_id) {
    throw new InvalidGrant('authorization code was issued to another client (RFC 6749 §4.1.3)');
  }
};
