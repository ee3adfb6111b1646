// Configuration comes only from the environment (the README lists every
// variable with its default). Every variable is parsed here once; a bad value
// stops the process with a message naming it.
import path from 'node:path';
import { LOG_FORMATS, type LogFormat } from '../http/log-format.ts';

export interface RateLimitSetting {
  max: number;
  windowMs: number;
}

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
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/** SMTP_URL: the message names what is wrong, never the password the URL holds. */
function smtpUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.SMTP_URL;
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError('SMTP_URL', 'must be an absolute URL like smtp://user:password@mail.example.com:587');
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') throw new ConfigError('SMTP_URL', 'must use smtp: or smtps:');
  if (!parsed.hostname) throw new ConfigError('SMTP_URL', 'must name the SMTP server (smtp://host:port)');
  if (parsed.pathname !== '' && parsed.pathname !== '/') throw new ConfigError('SMTP_URL', 'must not have a path');
  if (parsed.password !== '' && parsed.username === '') throw new ConfigError('SMTP_URL', 'has a password but no user');
  return raw;
}

/** A plain address (local@domain), as a From: header carries it. */
const EMAIL_ADDRESS = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+$/;

function alertFrom(env: NodeJS.ProcessEnv, baseUrl: string): string {
  const raw = env.ALERT_FROM?.trim();
  if (raw === undefined || raw === '') return `switchboard@${new URL(baseUrl).hostname}`;
  if (!EMAIL_ADDRESS.test(raw) || raw.length > 254)
    throw new ConfigError('ALERT_FROM', `must be an e-mail address like alerts@example.com, got "${raw}"`);
  return raw;
}

function url(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}`);
  }
  return raw;
}

/** "10s,1m,5m" → [10000, 60000, 300000] */
export function parseDurationList(name: string, raw: string): number[] {
  const items = raw.split(',').map((item) => item.trim());
  return items.map((item) => {
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(item);
    if (!match) throw new ConfigError(name, `"${item}" is not a duration like 10s, 5m or 2h`);
    return Number(match[1]) * UNIT_MS[match[2]!]!;
  });
}

/** One duration ("30s", "2m"), between minMs and maxMs. */
function duration(env: NodeJS.ProcessEnv, name: string, fallback: string, minMs: number, maxMs: number): number {
  const raw = (env[name] || fallback).trim();
  const [value] = parseDurationList(name, raw);
  if (raw.includes(',') || value! < minMs || value! > maxMs) {
    throw new ConfigError(name, `must be one duration between ${minMs / 1000}s and ${maxMs / 1000}s, got "${raw}"`);
  }
  return value!;
}

/** "300/min" → {max: 300, windowMs: 60000} */
function rateLimit(env: NodeJS.ProcessEnv, name: string, fallback: string): RateLimitSetting {
  const raw = env[name] || fallback;
  const match = /^(\d+)\s*\/\s*(s|sec|second|m|min|minute|h|hour)$/.exec(raw.trim());
  if (!match || Number(match[1]) < 1) {
    throw new ConfigError(name, `must look like 300/min (per s, min or hour), got "${raw}"`);
  }
  const unit = match[2]!;
  const windowMs = unit.startsWith('s') ? 1000 : unit.startsWith('h') ? 3_600_000 : 60_000;
  return { max: Number(match[1]), windowMs };
}

/** "443,8443" → [443, 8443]; "*" → any port (development and tests with loopback receivers). */
function portList(env: NodeJS.ProcessEnv, name: string, fallback: string): readonly number[] | '*' {
  const raw = (env[name] || fallback).trim();
  if (raw === '*') return '*';
  const ports = raw.split(',').map((item) => item.trim());
  for (const port of ports) {
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
      throw new ConfigError(name, `must be * or a comma-separated list of ports 1-65535, got "${raw}"`);
    }
  }
  return [...new Set(ports.map(Number))];
}

/** 32 bytes in base64, or undefined; the message never repeats the value. */
function base64Key(raw: string): Buffer | undefined {
  const key = Buffer.from(raw, 'base64');
  return key.length === 32 ? key : undefined;
}

function secretKey(env: NodeJS.ProcessEnv): Buffer | undefined {
  const raw = env.SECRET_KEY;
  if (raw === undefined || raw === '') return undefined;
  const key = base64Key(raw);
  if (!key) throw new ConfigError('SECRET_KEY', 'must be 32 bytes encoded as base64');
  return key;
}

/** "KEY1,KEY2": older keys, each like SECRET_KEY. */
function previousKeys(env: NodeJS.ProcessEnv): Buffer[] {
  const raw = env.SECRET_KEY_PREVIOUS;
  if (raw === undefined || raw.trim() === '') return [];
  const items = raw.split(',');
  return items.map((item, index) => {
    const key = base64Key(item.trim());
    if (!key) {
      throw new ConfigError(
        'SECRET_KEY_PREVIOUS',
        `key ${index + 1} of ${items.length} is not 32 bytes encoded as base64 (a comma-separated list of keys like SECRET_KEY)`,
      );
    }
    return key;
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const logLevel = (env.LOG_LEVEL || 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const logFormat = (env.LOG_FORMAT || 'json').toLowerCase() as LogFormat;
  if (!LOG_FORMATS.includes(logFormat)) {
    throw new ConfigError('LOG_FORMAT', `must be ${LOG_FORMATS.join(' or ')}, got "${env.LOG_FORMAT}"`);
  }
  const baseUrl = url(env, 'BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  return {
    port,
    host: env.HOST || '127.0.0.1',
    workerPort: integer(env, 'WORKER_PORT', 0, 0, 65535),
    shutdownTimeoutMs: duration(env, 'SHUTDOWN_TIMEOUT', '30s', 1000, 600_000),
    baseUrl: baseUrl.replace(/\/+$/, ''),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseAppUrl: url(env, 'DATABASE_APP_URL', ['postgres:', 'postgresql:']),
    dataDir: path.resolve(env.DATA_DIR || './.data'),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    secretKey: secretKey(env),
    secretKeyPrevious: previousKeys(env),
    accessTokenTtl: integer(env, 'ACCESS_TOKEN_TTL', 3600, 1, 31_536_000),
    refreshTokenTtl: integer(env, 'REFRESH_TOKEN_TTL', 5_184_000, 1, 315_360_000),
    refreshTokenMaxLifetime: integer(env, 'REFRESH_TOKEN_MAX_LIFETIME', 7_776_000, 1, 315_360_000),
    authCodeTtl: integer(env, 'AUTH_CODE_TTL', 600, 1, 3600),
    refreshReuseGrace: integer(env, 'REFRESH_REUSE_GRACE', 60, 0, 3600),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    webhookRetryScheduleMs: parseDurationList(
      'WEBHOOK_RETRY_SCHEDULE',
      env.WEBHOOK_RETRY_SCHEDULE || '10s,1m,5m,30m,2h,5h,10h,14h,20h,24h',
    ),
    webhookAllowPrivateTargets: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    // With private targets allowed (development, tests: receivers on random
    // local ports) an unset list means any port; production keeps 443,8443.
    webhookAllowedPorts: portList(env, 'WEBHOOK_ALLOWED_PORTS', boolean(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false) ? '*' : '443,8443'),
    webhookMaxSubscriptions: integer(env, 'WEBHOOK_MAX_SUBSCRIPTIONS', 100, 1, 100_000),
    rateLimit: rateLimit(env, 'RATE_LIMIT', '300/min'),
    tokenRateLimit: rateLimit(env, 'TOKEN_RATE_LIMIT', '600/min'),
    logLevel,
    logFormat,
    cacheMaxAgeSeconds: integer(env, 'CACHE_MAX_AGE', 10, 0, 300),
    // At least a day (the maintenance task runs hourly), at most ten years.
    auditRetentionMs: duration(env, 'AUDIT_RETENTION', '400d', 86_400_000, 3650 * 86_400_000),
    smtpUrl: smtpUrl(env),
    alertFrom: alertFrom(env, baseUrl),
    alertAfterMs: duration(env, 'ALERT_AFTER', '1h', 0, 30 * 86_400_000),
  };
}
