import { urlCharacterProblem } from '../../url-characters.ts';
import { ConfigError } from '../config-error.ts';
import { duration, type Kind } from '../kinds.ts';
import { setting } from '../setting.ts';

/** SMTP_URL's opt-out of required STARTTLS (`?starttls=optional`), for a relay on the loopback. */
export const STARTTLS_PARAMETER = 'starttls';

/** A host on this machine: where a login may travel without STARTTLS, never leaving it. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The query SMTP_URL may carry: only the loopback relay's opt-out of STARTTLS (src/alerts/mailer.ts reads it). */
function checkSmtpQuery(parsed: URL, name: string): void {
  for (const [key, value] of parsed.searchParams) {
    if (key !== STARTTLS_PARAMETER || value !== 'optional') {
      throw new ConfigError(name, `has an unknown query parameter "${key}"; the only one is ${STARTTLS_PARAMETER}=optional`);
    }
  }
  if (!parsed.searchParams.has(STARTTLS_PARAMETER)) return;
  if (parsed.protocol !== 'smtp:') throw new ConfigError(name, `${STARTTLS_PARAMETER}=optional is for smtp://, not smtps://`);
  if (!isLoopbackHost(parsed.hostname)) {
    throw new ConfigError(
      name,
      `${STARTTLS_PARAMETER}=optional lets the login go without TLS, so it is only for a relay on this machine (127.0.0.1, [::1], localhost), not ${parsed.hostname}: remove it and use a server that offers STARTTLS, or smtps://`,
    );
  }
}

/** The message names what is wrong, never the password the URL holds. */
const smtpUrl: Kind<string> = {
  accepts:
    'an absolute `smtp://` or `smtps://` URL without a path (`smtp://user:password@mail.example.com:587`) of printable ASCII without spaces; the one query parameter is `?starttls=optional`, for a relay on the loopback only',
  parse(raw, name) {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(name, 'must be an absolute URL like smtp://user:password@mail.example.com:587');
    }
    // Parsing dropped any CR, LF and TAB; the URL is used as given.
    const characters = urlCharacterProblem(raw);
    if (characters) throw new ConfigError(name, characters);
    if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') throw new ConfigError(name, 'must use smtp: or smtps:');
    if (!parsed.hostname) throw new ConfigError(name, 'must name the SMTP server (smtp://host:port)');
    if (parsed.pathname !== '' && parsed.pathname !== '/') throw new ConfigError(name, 'must not have a path');
    if (parsed.password !== '' && parsed.username === '') throw new ConfigError(name, 'has a password but no user');
    checkSmtpQuery(parsed, name);
    return raw;
  },
};

/** A plain address (local@domain), as a From: header carries it. */
const EMAIL_ADDRESS = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+$/;

const emailAddress: Kind<string> = {
  accepts: 'an e-mail address like `alerts@example.com` (no display name)',
  parse(raw, name) {
    if (!EMAIL_ADDRESS.test(raw) || raw.length > 254) {
      throw new ConfigError(name, `must be an e-mail address like alerts@example.com, got "${raw}"`);
    }
    return raw;
  },
};

export const ALERTS = {
  SMTP_URL: setting({
    kind: smtpUrl,
    default: undefined,
    defaultText: 'unset',
    meaning:
      'The SMTP server alert e-mails to owners and admins go through, user and password in the URL: `smtp://user:password@mail.example.com:587` or `smtps://…:465`. With a user in an `smtp://` URL, STARTTLS is required: a server that does not offer it gets no login, and each e-mail is given up at once with a log line saying so. A relay on this machine without STARTTLS: add `?starttls=optional` (refused, exit 78, with any host other than 127.0.0.1, [::1] or localhost). Without a user, STARTTLS is used when offered. Unset: no alert e-mails; the home page shows open incidents as a banner, and the audit log has them. `switchboard alerts test --org ID` checks it.',
  }),
  ALERT_FROM: setting({
    kind: emailAddress,
    default: undefined,
    defaultText: '`switchboard@` + the host of `BASE_URL`',
    meaning: "The alerts' sender address (`From:`).",
  }),
  ALERT_AFTER: setting({
    kind: duration(0, 30 * 86_400_000),
    default: '1h',
    meaning:
      "How long a webhook incident (the receiver's circuit open) lasts, from its first opening, before owners and admins get one e-mail about it; `0s`: at once.",
  }),
  ALERT_RULES_INTERVAL: setting({
    kind: duration(100, 3_600_000),
    default: '5s',
    meaning:
      'How often a worker applies the alert rules (incidents, recoveries, disabled subscriptions, revoked grants): the most an alert e-mail waits after its event, beside `ALERT_AFTER`.',
  }),
  ALERT_FAILING_RULE_INTERVAL: setting({
    kind: duration(100, 86_400_000),
    default: '30s',
    meaning:
      "How often a worker looks for subscriptions whose deliveries failed for good while their circuit stayed closed (a receiver answering 404, say): it reads every active subscription's failed deliveries, so less often than the other rules.",
  }),
};
