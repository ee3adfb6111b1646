// RFC 6749 §4.1.2: authorization codes are short-lived (AUTH_CODE_TTL).
import { InvalidGrant } from '../oauth.errors.ts';
import type { CodeExchangeCheck } from './context.ts';

export const checkCodeExpiry: CodeExchangeCheck = function checkCodeExpiry(ctx) {
  if (ctx.code.expired) throw new InvalidGrant('authorization code is expired (RFC 6749 §4.1.2)');
};
