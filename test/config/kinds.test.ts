// One parser per kind of value (issue: values parsed two ways): a duration,
// a switch, a rate or a size is spelled the same way in every variable that
// takes one, and every value accepted before the registry still is.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { size } from '../../src/config/kinds.ts';
import { SETTINGS } from '../../src/config/settings/index.ts';
import { loadTracingConfig } from '../../src/tracing/tracing-config.ts';

function refused(env: NodeJS.ProcessEnv, name: string, message?: RegExp): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => error instanceof ConfigError && error.variable === name && (!message || message.test(error.message)),
    `${JSON.stringify(env)} is refused naming ${name}`,
  );
}

describe('kinds of value', () => {
  test('every value that worked before one parser per kind still works, meaning the same', () => {
    const before = loadConfig({
      ACCESS_TOKEN_TTL: '7200',
      REFRESH_TOKEN_TTL: '86400',
      REFRESH_TOKEN_MAX_LIFETIME: '172800',
      AUTH_CODE_TTL: '3600',
      REFRESH_REUSE_GRACE: '0',
      WEBHOOK_TIMEOUT_MS: '2500',
      CACHE_MAX_AGE: '0',
      SHUTDOWN_TIMEOUT: '45s',
      AUDIT_RETENTION: '2000h',
      ALERT_AFTER: '0s',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'YES',
      RATE_LIMIT: '300/minute',
      TOKEN_RATE_LIMIT: '10 / sec',
      LOG_LEVEL: 'DEBUG',
      LOG_FORMAT: 'Pretty',
    });
    assert.equal(before.accessTokenTtl, 7200);
    assert.equal(before.refreshTokenTtl, 86400);
    assert.equal(before.refreshTokenMaxLifetime, 172800);
    assert.equal(before.authCodeTtl, 3600);
    assert.equal(before.refreshReuseGrace, 0);
    assert.equal(before.webhookTimeoutMs, 2500);
    assert.equal(before.cacheMaxAgeSeconds, 0);
    assert.equal(before.shutdownTimeoutMs, 45_000);
    assert.equal(before.auditRetentionMs, 2000 * 3_600_000);
    assert.equal(before.alertAfterMs, 0);
    assert.equal(before.webhookAllowPrivateTargets, true);
    assert.deepEqual(before.rateLimit, { max: 300, windowMs: 60_000 });
    assert.deepEqual(before.tokenRateLimit, { max: 10, windowMs: 1000 });
    assert.equal(before.logLevel, 'debug');
    assert.equal(before.logFormat, 'pretty');
  });

  test('a duration is spelled the same in every variable that takes one; a bare number is in the unit it always was', () => {
    const config = loadConfig({
      ACCESS_TOKEN_TTL: '2h',
      REFRESH_TOKEN_MAX_LIFETIME: '90d',
      AUTH_CODE_TTL: '5m',
      REFRESH_REUSE_GRACE: '30s',
      WEBHOOK_TIMEOUT_MS: '15s',
      CACHE_MAX_AGE: '1m',
      SHUTDOWN_TIMEOUT: '20',
      ALERT_AFTER: '90',
      WEBHOOK_RETRY_SCHEDULE: '10,2m,500ms',
    });
    assert.equal(config.accessTokenTtl, 7200);
    assert.equal(config.refreshTokenMaxLifetime, 90 * 86_400);
    assert.equal(config.authCodeTtl, 300);
    assert.equal(config.refreshReuseGrace, 30);
    assert.equal(config.webhookTimeoutMs, 15_000);
    assert.equal(config.cacheMaxAgeSeconds, 60);
    assert.equal(config.shutdownTimeoutMs, 20_000);
    assert.equal(config.alertAfterMs, 90_000);
    assert.deepEqual(config.webhookRetryScheduleMs, [10_000, 120_000, 500]);
    // A variable used in whole seconds refuses a fraction of one, saying what it accepts.
    refused({ CACHE_MAX_AGE: '1500ms' }, 'CACHE_MAX_AGE', /^CACHE_MAX_AGE: must be a duration from 0s to 5m .*, got "1500ms"$/);
  });

  test("Switchboard's switches take true/false, 1/0 and yes/no; OpenTelemetry's keep the specification's true/false", () => {
    for (const [raw, value] of [
      ['yes', true],
      ['1', true],
      ['True', true],
      ['no', false],
      ['0', false],
      ['FALSE', false],
    ] as const) {
      assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: raw }).webhookAllowPrivateTargets, value, raw);
    }
    refused(
      { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe' },
      'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      /must be true or false \(also 1\/0, yes\/no, any case\), got "maybe"$/,
    );
    assert.deepEqual(loadTracingConfig({ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'console' }).exporters, []);
    assert.throws(
      () => loadTracingConfig({ OTEL_SDK_DISABLED: 'yes' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /must be true or false, any case \(the OpenTelemetry specification's rule\), got "yes"$/.test(error.message),
    );
  });

  test('a rate is a count per second, minute or hour, in each of the spellings the docs list', () => {
    const spellings: [string, number][] = [
      ['s', 1000],
      ['sec', 1000],
      ['second', 1000],
      ['m', 60_000],
      ['min', 60_000],
      ['minute', 60_000],
      ['h', 3_600_000],
      ['hour', 3_600_000],
    ];
    for (const [unit, windowMs] of spellings) {
      assert.deepEqual(loadConfig({ RATE_LIMIT: `7/${unit}` }).rateLimit, { max: 7, windowMs }, unit);
      assert.match(SETTINGS.RATE_LIMIT.kind.accepts, new RegExp(`\`N/${unit}\``), `the docs list N/${unit}`);
    }
    refused({ RATE_LIMIT: '7/day' }, 'RATE_LIMIT', /must be a count per second, minute or hour: N\/s, N\/min or N\/hour .*got "7\/day"$/);
    refused({ TOKEN_RATE_LIMIT: '0/min' }, 'TOKEN_RATE_LIMIT');
  });

  test('a size is bytes, or a number with B, KB, MB or GB (1024-based, any case)', () => {
    const kind = size(1, 1024 ** 3);
    assert.equal(kind.parse('512', 'X'), 512);
    assert.equal(kind.parse('64kb', 'X'), 65_536);
    assert.equal(kind.parse('2 MiB', 'X'), 2 * 1024 ** 2);
    assert.equal(kind.parse('1GB', 'X'), 1024 ** 3);
    assert.throws(() => kind.parse('2GB', 'X'), /X: must be a size from 1 to 1073741824 bytes/);
    assert.throws(
      () => kind.parse('lots', 'X'),
      (error: unknown) => error instanceof ConfigError && error.variable === 'X',
    );
  });
});
