import { boolean, duration, rate } from '../kinds.ts';
import { setting } from '../setting.ts';

const DAY = 86_400_000;

export const OAUTH = {
  ACCESS_TOKEN_TTL: setting({
    kind: duration(1000, 365 * DAY, 's', true),
    default: '3600',
    defaultText: '`3600` (1 hour)',
    meaning: 'How long an access token is valid.',
  }),
  REFRESH_TOKEN_TTL: setting({
    kind: duration(1000, 3650 * DAY, 's', true),
    default: '5184000',
    defaultText: '`5184000` (60 days)',
    meaning: 'How long a refresh token is valid unused; each rotation starts it again.',
  }),
  REFRESH_TOKEN_MAX_LIFETIME: setting({
    kind: duration(1000, 3650 * DAY, 's', true),
    default: '7776000',
    defaultText: '`7776000` (90 days)',
    meaning: 'How long after the user approved a client no refresh token of that grant works any more, however often it rotated.',
  }),
  AUTH_CODE_TTL: setting({
    kind: duration(1000, 3_600_000, 's', true),
    default: '600',
    defaultText: '`600` (10 minutes)',
    meaning: 'How long an authorization code may wait for its exchange.',
  }),
  REFRESH_REUSE_GRACE: setting({
    kind: duration(0, 3_600_000, 's', true),
    default: '60',
    defaultText: '`60` (1 minute)',
    meaning: 'How long a rotated refresh token keeps working (a retried refresh); used later, it revokes the whole grant.',
  }),
  TOKEN_RATE_LIMIT: setting({
    kind: rate,
    default: '600/min',
    meaning: 'Requests to `/oauth/token` and `/oauth/revoke` per address; each client gets half of it per address.',
  }),
  OAUTH_CLIENT_METADATA_DOCUMENTS: setting({
    kind: boolean,
    default: 'true',
    meaning:
      'A `client_id` may be the `https` URL of the client’s metadata document, fetched under the webhooks’ outbound rules ([mcp.md](mcp.md)); `false`: such client ids are unknown.',
  }),
  OAUTH_DYNAMIC_REGISTRATION: setting({
    kind: boolean,
    default: 'true',
    meaning: 'Public clients may register at `POST /oauth/register` (RFC 7591); `false`: the route and `registration_endpoint` are gone.',
  }),
};
