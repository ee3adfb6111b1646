// Configuration comes only from the environment. Each variable is declared
// once, in the registry (settings/), with its kind, default and meaning
// (docs/configuration.md is written from it); here the values become the
// Config the process runs with. A bad value stops the process with a
// message naming it.
import path from 'node:path';
import type { RateLimitSetting } from './kinds.ts';
import { readSetting } from './settings/index.ts';
import type { LogFormat } from './settings/server.ts';

export { ConfigError } from './config-error.ts';
export type { RateLimitSetting } from './kinds.ts';

export interface Config {
  port: number;
  host: string;
  /** WORKER_PORT: where `switchboard worker` serves /healthz, /readyz and /metrics (0: a free port, printed at start). */
  workerPort: number;
  /** SHUTDOWN_TIMEOUT: after SIGTERM/SIGINT the process exits within this long, whatever is still running. */
  shutdownTimeoutMs: number;
  baseUrl: string;
  databaseUrl: string | undefined;
  /** DATABASE_APP_URL: the request pool's connection (switchboard_request); derived from the owner's when unset. */
  databaseAppUrl: string | undefined;
  dataDir: string;
  redisUrl: string | undefined;
  /** Raw base64 from SECRET_KEY; undefined means "generate into DATA_DIR". */
  secretKey: Buffer | undefined;
  /** SECRET_KEY_PREVIOUS: older keys, newest first; what they sealed still opens, nothing new is sealed under them. */
  secretKeyPrevious: Buffer[];
  accessTokenTtl: number;
  refreshTokenTtl: number;
  /** REFRESH_TOKEN_MAX_LIFETIME: seconds from the user's approval after which no refresh token of that grant is valid. */
  refreshTokenMaxLifetime: number;
  authCodeTtl: number;
  refreshReuseGrace: number;
  webhookTimeoutMs: number;
  webhookRetryScheduleMs: number[];
  webhookAllowPrivateTargets: boolean;
  /** WEBHOOK_ALLOWED_PORTS: the ports a hook URL may name ('*': any). */
  webhookAllowedPorts: readonly number[] | '*';
  /** WEBHOOK_MAX_SUBSCRIPTIONS: active subscriptions an organization may have at once. */
  webhookMaxSubscriptions: number;
  /** WEBHOOK_RATE_LIMIT: per grant (or user) on /webhooks/subscribe and the webhook management routes. */
  webhookRateLimit: RateLimitSetting;
  rateLimit: RateLimitSetting;
  /** Per address on /oauth/token and /oauth/revoke; each client gets half of it per address. */
  tokenRateLimit: RateLimitSetting;
  logLevel: string;
  /** LOG_FORMAT: json lines (default) or pretty, readable lines for a terminal. */
  logFormat: LogFormat;
  /** CACHE_MAX_AGE: seconds a cached credential or read may be served at most (0: no process caches). */
  cacheMaxAgeSeconds: number;
  /** AUDIT_RETENTION: how long audit events are kept before the maintenance task removes them. */
  auditRetentionMs: number;
  /** SMTP_URL: where alert e-mails go (smtp:// or smtps://, user and password in the URL); unset: no e-mail is sent. */
  smtpUrl: string | undefined;
  /** ALERT_FROM: the alerts' sender address; default switchboard@ + the host of BASE_URL. */
  alertFrom: string;
  /** ALERT_AFTER: how long an incident lasts, from its first opening, before owners and admins are told. */
  alertAfterMs: number;
  /** ALERT_RULES_INTERVAL: how often a worker applies the alert rules. */
  alertRulesIntervalMs: number;
  /** ALERT_FAILING_RULE_INTERVAL: how often the failing-deliveries rule runs (it reads more). */
  alertFailingRuleIntervalMs: number;
  /** EMBEDDED_POSTGRES_RECOVERY_WINDOW: how long a crashed embedded PostgreSQL is started again before the process gives up. */
  embeddedRecoveryWindowMs: number;
  /** MCP_ENABLED: serve {BASE_URL}/mcp and its protected-resource metadata. */
  mcpEnabled: boolean;
  /** MCP_RATE_LIMIT: requests to /mcp per grant. */
  mcpRateLimit: RateLimitSetting;
  /** OAUTH_CLIENT_METADATA_DOCUMENTS: a client_id may be the HTTPS URL of its metadata document. */
  oauthClientMetadataDocuments: boolean;
  /** OAUTH_DYNAMIC_REGISTRATION: public clients may register at /oauth/register (RFC 7591). */
  oauthDynamicRegistration: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const read = <N extends Parameters<typeof readSetting>[1]>(name: N) => readSetting(env, name);
  const port = read('PORT');
  const baseUrl = (read('BASE_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const allowPrivate = read('WEBHOOK_ALLOW_PRIVATE_TARGETS');
  return {
    port,
    host: read('HOST'),
    workerPort: read('WORKER_PORT'),
    shutdownTimeoutMs: read('SHUTDOWN_TIMEOUT'),
    baseUrl,
    databaseUrl: read('DATABASE_URL'),
    databaseAppUrl: read('DATABASE_APP_URL'),
    dataDir: path.resolve(read('DATA_DIR')),
    redisUrl: read('REDIS_URL'),
    secretKey: read('SECRET_KEY'),
    secretKeyPrevious: read('SECRET_KEY_PREVIOUS') ?? [],
    accessTokenTtl: read('ACCESS_TOKEN_TTL') / 1000,
    refreshTokenTtl: read('REFRESH_TOKEN_TTL') / 1000,
    refreshTokenMaxLifetime: read('REFRESH_TOKEN_MAX_LIFETIME') / 1000,
    authCodeTtl: read('AUTH_CODE_TTL') / 1000,
    refreshReuseGrace: read('REFRESH_REUSE_GRACE') / 1000,
    webhookTimeoutMs: read('WEBHOOK_TIMEOUT_MS'),
    webhookRetryScheduleMs: read('WEBHOOK_RETRY_SCHEDULE'),
    webhookAllowPrivateTargets: allowPrivate,
    webhookAllowedPorts: read('WEBHOOK_ALLOWED_PORTS') ?? (allowPrivate ? '*' : [443, 8443]),
    webhookMaxSubscriptions: read('WEBHOOK_MAX_SUBSCRIPTIONS'),
    webhookRateLimit: read('WEBHOOK_RATE_LIMIT'),
    rateLimit: read('RATE_LIMIT'),
    tokenRateLimit: read('TOKEN_RATE_LIMIT'),
    logLevel: read('LOG_LEVEL'),
    logFormat: read('LOG_FORMAT'),
    cacheMaxAgeSeconds: read('CACHE_MAX_AGE') / 1000,
    auditRetentionMs: read('AUDIT_RETENTION'),
    smtpUrl: read('SMTP_URL'),
    alertFrom: read('ALERT_FROM') ?? `switchboard@${new URL(baseUrl).hostname}`,
    alertAfterMs: read('ALERT_AFTER'),
    alertRulesIntervalMs: read('ALERT_RULES_INTERVAL'),
    alertFailingRuleIntervalMs: read('ALERT_FAILING_RULE_INTERVAL'),
    embeddedRecoveryWindowMs: read('EMBEDDED_POSTGRES_RECOVERY_WINDOW'),
    mcpEnabled: read('MCP_ENABLED'),
    mcpRateLimit: read('MCP_RATE_LIMIT'),
    oauthClientMetadataDocuments: read('OAUTH_CLIENT_METADATA_DOCUMENTS'),
    oauthDynamicRegistration: read('OAUTH_DYNAMIC_REGISTRATION'),
  };
}
