import { choice, duration, integer, text, url } from '../kinds.ts';
import { setting } from '../setting.ts';

export const SERVER = {
  PORT: setting({
    kind: integer(0, 65535),
    default: '3000',
    meaning:
      'HTTP port of `serve` (its `/healthz`, `/readyz` and `/metrics` too). It is checked before PostgreSQL starts: a port another process holds stops `serve` at once.',
  }),
  HOST: setting({
    kind: text('an address or host name this machine can listen on'),
    default: '127.0.0.1',
    meaning: 'Address `serve` and `worker` listen on; `0.0.0.0` in a container.',
  }),
  BASE_URL: setting({
    kind: url(['http:', 'https:'], 'https://switchboard.example.com'),
    default: undefined,
    defaultText: '`http://localhost:$PORT`',
    meaning: 'The public URL: the OAuth issuer, redirects, links. `https://` also marks cookies `Secure`.',
  }),
};

export const DATABASE = {
  DATABASE_URL: setting({
    kind: url(['postgres:', 'postgresql:'], 'postgres://user:password@host:5432/db'),
    default: undefined,
    defaultText: 'unset',
    meaning:
      'PostgreSQL, owner of the schema; `serve`, `worker` and `migrate` apply migrations. Unset: an embedded PostgreSQL in `DATA_DIR`.',
  }),
  DATABASE_APP_URL: setting({
    kind: url(['postgres:', 'postgresql:'], 'postgres://switchboard_request:password@host:5432/db'),
    default: undefined,
    defaultText: 'derived',
    meaning:
      "The connection request work uses, as the login role `switchboard_request` (row-level security binds it). Unset: `DATABASE_URL`'s server with that user and a password derived from the owner's, set by `serve` at start (needs superuser or CREATEROLE). Set it on a managed PostgreSQL where you give the role its password.",
  }),
  DATA_DIR: setting({
    kind: text('a directory path (created when missing; it must be writable)'),
    default: './.data',
    meaning:
      "The embedded PostgreSQL's data, and the generated `secret.key` when `SECRET_KEY` is unset. Processes that share it share both.",
  }),
  EMBEDDED_POSTGRES_RECOVERY_WINDOW: setting({
    kind: duration(1000, 3_600_000),
    default: '60s',
    meaning:
      'How long `serve` and `worker` keep starting their embedded PostgreSQL again after it ended unexpectedly (the OOM killer, say) before they give up: `/healthz` then fails and the process exits 1, so that a supervisor acts.',
  }),
};

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const LOGS = {
  LOG_LEVEL: setting({
    kind: choice(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    default: 'info',
    meaning: 'The least severe level of the log lines written.',
  }),
  LOG_FORMAT: setting({
    kind: choice(LOG_FORMATS),
    default: 'json',
    meaning:
      'How log lines are written on stdout: `json` (one JSON object a line, for a log collector) or `pretty` (coloured, readable lines for a terminal; secrets hidden as in JSON).',
  }),
};
