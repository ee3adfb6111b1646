import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

describe('configuration from the environment', () => {
  test('unset variables take their documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.baseUrl, 'http://localhost:3000');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.accessTokenTtl, 3600);
    assert.equal(config.refreshTokenTtl, 5184000);
    assert.equal(config.authCodeTtl, 600);
    assert.equal(config.refreshReuseGrace, 60);
    assert.equal(config.refreshTokenMaxLifetime, 90 * 24 * 3600);
    assert.equal(config.webhookTimeoutMs, 10000);
    assert.deepEqual(config.webhookRetryScheduleMs.slice(0, 3), [10_000, 60_000, 300_000]);
    assert.equal(config.webhookRetryScheduleMs.length, 10);
    assert.equal(config.webhookAllowPrivateTargets, false);
    assert.deepEqual(config.webhookAllowedPorts, [443, 8443]);
    assert.equal(config.webhookMaxSubscriptions, 100);
    assert.deepEqual(config.rateLimit, { max: 300, windowMs: 60_000 });
    assert.equal(config.logLevel, 'info');
    assert.equal(config.workerPort, 0);
    assert.equal(config.shutdownTimeoutMs, 30_000);
    assert.equal(config.smtpUrl, undefined);
    assert.equal(config.alertFrom, 'switchboard@localhost');
    assert.equal(config.alertAfterMs, 3_600_000);
    assert.equal(config.auditRetentionMs, 400 * 86_400_000);
  });

  test('AUDIT_RETENTION is a duration', () => {
    assert.equal(loadConfig({ AUDIT_RETENTION: '90d' }).auditRetentionMs, 90 * 86_400_000);
    assert.equal(loadConfig({ AUDIT_RETENTION: '48h' }).auditRetentionMs, 2 * 86_400_000);
  });

  test('SMTP_URL, ALERT_FROM and ALERT_AFTER are parsed; ALERT_FROM defaults to switchboard@ + the host of BASE_URL', () => {
    const config = loadConfig({
      SMTP_URL: 'smtps://alerts:s3cret@mail.example.com:465',
      BASE_URL: 'https://switchboard.example.com:8443/',
      ALERT_AFTER: '15m',
    });
    assert.equal(config.smtpUrl, 'smtps://alerts:s3cret@mail.example.com:465');
    assert.equal(config.alertFrom, 'switchboard@switchboard.example.com');
    assert.equal(config.alertAfterMs, 900_000);
    assert.equal(loadConfig({ ALERT_FROM: 'ops@example.org' }).alertFrom, 'ops@example.org');
    assert.equal(loadConfig({ ALERT_AFTER: '0s' }).alertAfterMs, 0);
  });

  for (const [name, value, expected] of [
    ['SMTP_URL', 'http://mail.example.com', /^SMTP_URL: must use smtp: or smtps:$/],
    ['SMTP_URL', 'not a url', /^SMTP_URL: must be an absolute URL/],
    ['SMTP_URL', 'smtp://:pw@mail.example.com', /^SMTP_URL: has a password but no user$/],
    ['SMTP_URL', 'smtp://mail.example.com/path', /^SMTP_URL: must not have a path$/],
    // Issue 37: a URL an operator gives follows the character rule of every URL given to us.
    ['SMTP_URL', 'smtp://alerts:pw@mail.exa\r\nmple.com:587', /^SMTP_URL: must not contain a control character \(U\+000D/],
    ['BASE_URL', 'https://switchboard.example.com/\r\nX-Injected: 1', /^BASE_URL: must not contain a control character \(U\+000D/],
    ['BASE_URL', 'https://switchboard.example.com/a b', /^BASE_URL: must not contain a space/],
    ['BASE_URL', 'https://switchböard.example.com/', /^BASE_URL: must not contain a non-ASCII character/],
    ['ALERT_FROM', 'Ops <ops@example.org>', /^ALERT_FROM: must be an e-mail address/],
    ['ALERT_FROM', 'nobody', /^ALERT_FROM: must be an e-mail address/],
    ['ALERT_AFTER', 'soon', /^ALERT_AFTER: must be a duration from `?0s`? to `?30d`?/],
    ['ALERT_AFTER', '31d', /^ALERT_AFTER: must be a duration from 0s to 30d \(ms, s, m, h or d; a bare number is seconds\), got "31d"$/],
  ] as const) {
    test(`${name}=${value} is refused with a message naming ${name}, never echoing a password`, () => {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: unknown) =>
          error instanceof ConfigError && error.variable === name && expected.test(error.message) && !error.message.includes('pw'),
      );
    });
  }

  test('WORKER_PORT and SHUTDOWN_TIMEOUT are parsed', () => {
    const config = loadConfig({ WORKER_PORT: '9100', SHUTDOWN_TIMEOUT: '2m' });
    assert.equal(config.workerPort, 9100);
    assert.equal(config.shutdownTimeoutMs, 120_000);
  });

  test('WEBHOOK_ALLOWED_PORTS takes a list (duplicates dropped) or * for any port', () => {
    assert.deepEqual(loadConfig({ WEBHOOK_ALLOWED_PORTS: ' 443, 9443 ,443' }).webhookAllowedPorts, [443, 9443]);
    assert.equal(loadConfig({ WEBHOOK_ALLOWED_PORTS: '*' }).webhookAllowedPorts, '*');
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }).webhookAllowedPorts, '*', 'development default');
    assert.deepEqual(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOWED_PORTS: '443' }).webhookAllowedPorts, [443]);
  });

  const invalid: [string, string][] = [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['BASE_URL', 'not a url'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['REDIS_URL', 'http://x'],
    ['SECRET_KEY', 'c2hvcnQ='],
    ['SECRET_KEY_PREVIOUS', 'c2hvcnQ='],
    ['SECRET_KEY_PREVIOUS', `${Buffer.alloc(32, 1).toString('base64')},c2hvcnQ=`],
    ['SECRET_KEY_PREVIOUS', `${Buffer.alloc(32, 1).toString('base64')},,${Buffer.alloc(32, 2).toString('base64')}`],
    ['ACCESS_TOKEN_TTL', '-5'],
    ['REFRESH_TOKEN_MAX_LIFETIME', '90 days'],
    ['REFRESH_TOKEN_MAX_LIFETIME', '1500ms'],
    ['CACHE_MAX_AGE', '301'],
    ['CACHE_MAX_AGE', '6m'],
    ['REFRESH_TOKEN_MAX_LIFETIME', '0'],
    ['WEBHOOK_RETRY_SCHEDULE', '10s,soon'],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'maybe'],
    ['WEBHOOK_ALLOWED_PORTS', 'https'],
    ['WEBHOOK_ALLOWED_PORTS', '443,0'],
    ['WEBHOOK_ALLOWED_PORTS', '443,70000'],
    ['WEBHOOK_ALLOWED_PORTS', '443;8443'],
    ['WEBHOOK_MAX_SUBSCRIPTIONS', 'many'],
    ['WEBHOOK_MAX_SUBSCRIPTIONS', '0'],
    ['WEBHOOK_MAX_SUBSCRIPTIONS', '100001'],
    ['RATE_LIMIT', 'lots'],
    ['TOKEN_RATE_LIMIT', '0/min'],
    ['LOG_LEVEL', 'loud'],
    ['WORKER_PORT', '70000'],
    ['WORKER_PORT', 'metrics'],
    ['SHUTDOWN_TIMEOUT', 'soon'],
    ['SHUTDOWN_TIMEOUT', '10ms'],
    ['SHUTDOWN_TIMEOUT', '5s,10s'],
    ['AUDIT_RETENTION', 'forever'],
    ['AUDIT_RETENTION', '1h'],
    ['AUDIT_RETENTION', '4000d'],
  ];
  for (const [name, value] of invalid) {
    test(`${name}=${value} is refused with a message naming ${name}`, () => {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.equal(error.variable, name);
          assert.ok(error.message.startsWith(`${name}:`));
          return true;
        },
      );
    });
  }

  test('SECRET_KEY_PREVIOUS: older keys, comma-separated, each 32 bytes in base64; a bad one is named by position, never echoed', () => {
    const [one, two] = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    assert.deepEqual(loadConfig({}).secretKeyPrevious, []);
    assert.deepEqual(loadConfig({ SECRET_KEY_PREVIOUS: ` ${one.toString('base64')} , ${two.toString('base64')}` }).secretKeyPrevious, [
      one,
      two,
    ]);
    assert.throws(
      () => loadConfig({ SECRET_KEY_PREVIOUS: `${one.toString('base64')},bm90IGEga2V5` }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(
          error.message,
          'SECRET_KEY_PREVIOUS: key 2 of 2 is not 32 bytes encoded as base64 (a comma-separated list of keys like SECRET_KEY)',
        );
        return true;
      },
    );
  });

  test('values are parsed', () => {
    const config = loadConfig({
      PORT: '8080',
      BASE_URL: 'https://sb.example.com/',
      RATE_LIMIT: '5/s',
      TOKEN_RATE_LIMIT: '1200/min',
      WEBHOOK_RETRY_SCHEDULE: '1s, 2m',
      WEBHOOK_MAX_SUBSCRIPTIONS: ' 20 ',
    });
    assert.equal(config.webhookMaxSubscriptions, 20);
    assert.equal(config.baseUrl, 'https://sb.example.com');
    assert.deepEqual(config.rateLimit, { max: 5, windowMs: 1000 });
    assert.deepEqual(config.tokenRateLimit, { max: 1200, windowMs: 60_000 });
    assert.deepEqual(loadConfig({}).tokenRateLimit, { max: 600, windowMs: 60_000 });
    assert.deepEqual(config.webhookRetryScheduleMs, [1000, 120_000]);
  });
});
