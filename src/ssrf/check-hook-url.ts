// The subscribe-time rule for `hookUrl` (docs/interface.md §4.2). Delivery re-checks the
// address actually dialled (checked-connect.ts), because DNS answers
// may change between subscribing and delivering.
import { lookup as dnsLookup } from 'node:dns/promises';
import { urlCharacterProblem } from '../url-characters.ts';
import { isIpLiteral, isPublicAddress } from './ip-ranges.ts';

/** The longest hookUrl (a CHECK in SQL too). */
export const HOOK_URL_MAX_LENGTH = 2048;
/** WEBHOOK_ALLOWED_PORTS' default. */
export const DEFAULT_ALLOWED_PORTS: readonly number[] = [443, 8443];

/** `rule` marks a refusal by the port allow-list (its own error code); other refusals are plain validation. */
export type HookUrlCheck = { ok: true; url: URL } | { ok: false; reason: string; rule?: 'port' };

export interface CheckHookUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: lifts the address rule only. */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOWED_PORTS: the ports a hook URL may name ('*': any); the default list when absent. */
  allowedPorts?: readonly number[] | '*';
  /** Resolves a host name to every address (A and AAAA); defaults to the system resolver. */
  lookup?: (host: string) => Promise<string[]>;
}

export async function resolveAll(host: string): Promise<string[]> {
  const answers = await dnsLookup(host, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

/**
 * The authority as written, before WHATWG parsing drops an empty user-info
 * (`https://@host`): any `@` in it means the URL carried user-info.
 */
function rawAuthority(raw: string): string {
  const match = /^[a-z][a-z\d+.-]*:[/\\]*([^/\\?#]*)/i.exec(raw.trim());
  return match?.[1] ?? '';
}

/** `localhost`, `*.localhost` (RFC 6761), with or without the root dot, any case. */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

function fail(reason: string): HookUrlCheck {
  return { ok: false, reason };
}

/** What a refusal of a private target adds: the setting that lifts it, so a developer knows where to look. */
const PRIVATE_ALLOWED_BY = 'allowed only with WEBHOOK_ALLOW_PRIVATE_TARGETS=true, a development setting';

/** Static rules every target URL obeys, even with private targets allowed. */
export function checkUrlShape(raw: string): HookUrlCheck {
  if (raw.length > HOOK_URL_MAX_LENGTH) return fail(`hookUrl must be at most ${HOOK_URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('hookUrl must be an absolute URL');
  }
  if (url.protocol !== 'https:') return fail('hookUrl must use https');
  if (url.username || url.password || rawAuthority(raw).includes('@')) {
    return fail('hookUrl must not contain user-info (user:password@)');
  }
  if (!url.hostname) return fail('hookUrl must name a host');
  return { ok: true, url };
}

/** Whether `hostname` (from a parsed URL) is an allowed target before DNS. */
function checkHostLiteral(hostname: string): string | undefined {
  if (isIpLiteral(hostname)) {
    // WHATWG parsing has already turned decimal, octal, hex and short IPv4 forms into a.b.c.d.
    return isPublicAddress(hostname)
      ? undefined
      : `hookUrl host ${hostname} is a private, loopback, link-local, multicast, reserved or metadata address (${PRIVATE_ALLOWED_BY})`;
  }
  if (isLocalhostName(hostname)) return `hookUrl host ${hostname} is a local name (${PRIVATE_ALLOWED_BY})`;
  return undefined;
}

/** https without a port is 443. */
export function effectivePort(url: URL): number {
  return url.port === '' ? 443 : Number(url.port);
}

/**
 * The port allow-list: without it the delivery log
 * (status, error, answer excerpt) would probe any port of any public host.
 * Checked at subscribe and again before every attempt.
 */
export function checkPort(url: URL, allowedPorts: readonly number[] | '*'): HookUrlCheck {
  if (allowedPorts === '*' || allowedPorts.includes(effectivePort(url))) return { ok: true, url };
  return {
    ok: false,
    rule: 'port',
    reason: `hookUrl port ${effectivePort(url)} is not allowed: webhook targets may use port ${allowedPorts.join(', ')} (WEBHOOK_ALLOWED_PORTS)`,
  };
}

/**
 * The whole subscribe-time rule. The characters first: WHATWG parsing drops
 * CR, LF and TAB, and what is stored is the string checked here.
 */
export async function checkHookUrl(raw: string, opts: CheckHookUrlOptions): Promise<HookUrlCheck> {
  const characters = urlCharacterProblem(raw);
  if (characters) return fail(`hookUrl ${characters}`);
  const shape = checkUrlShape(raw);
  if (!shape.ok) return shape;
  const port = checkPort(shape.url, opts.allowedPorts ?? DEFAULT_ALLOWED_PORTS);
  if (!port.ok || opts.allowPrivate) return port;
  const { hostname } = shape.url;

  const literalProblem = checkHostLiteral(hostname);
  if (literalProblem) return fail(literalProblem);
  if (isIpLiteral(hostname)) return shape;

  let addresses: string[];
  try {
    addresses = await (opts.lookup ?? resolveAll)(hostname);
  } catch {
    return fail(`hookUrl host ${hostname} could not be resolved`);
  }
  if (addresses.length === 0) return fail(`hookUrl host ${hostname} could not be resolved`);
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (blocked !== undefined) {
    return fail(
      `hookUrl host ${hostname} resolves to ${blocked}, a private, loopback, link-local, multicast, reserved or metadata address (${PRIVATE_ALLOWED_BY})`,
    );
  }
  return shape;
}
