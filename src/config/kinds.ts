// One parser per kind of value, so that a duration, a switch, a rate or a size
// is spelled the same way in every variable. Each kind carries the sentence
// that says what it accepts: docs/configuration.md, `--help` and the error of
// a bad value all quote it, so they cannot disagree with the parser.
import { urlCharacterProblem } from '../url-characters.ts';
import { ConfigError } from './config-error.ts';

export interface Kind<T> {
  /** What the kind accepts, as a phrase after "must be" (Markdown code spans allowed). */
  accepts: string;
  parse(raw: string, name: string): T;
}

/** A bad value: the message quotes what is accepted and, unless `secret`, what was given. */
export function refuse(name: string, accepts: string, raw: string, secret = false): ConfigError {
  return new ConfigError(name, `must be ${plain(accepts)}${secret ? '' : `, got "${raw}"`}`);
}

/** Markdown code spans as plain text, for a terminal. */
export function plain(text: string): string {
  return text.replace(/`([^`]*)`/g, '$1');
}

export function integer(min: number, max: number): Kind<number> {
  const accepts = `a whole number from ${min} to ${max}`;
  return {
    accepts,
    parse(raw, name) {
      const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
      if (!(value >= min && value <= max)) throw refuse(name, accepts, raw);
      return value;
    },
  };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90d" → 7776000000; a bare number is in `bareUnit`. Undefined when it is not a duration. */
function durationMs(item: string, bareUnit: 'ms' | 's'): number | undefined {
  const match = /^(\d+)\s*(ms|s|m|h|d)?$/.exec(item.trim());
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] ?? bareUnit]!;
}

function spelled(ms: number): string {
  if (ms === 0) return '0s';
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

export const DURATION_SPELLING =
  'a whole number followed by `ms`, `s`, `m`, `h` or `d` (`500ms`, `30s`, `5m`, `2h`, `400d`), or a bare whole number';

/**
 * A duration in milliseconds, from minMs to maxMs: a number with `ms`, `s`,
 * `m`, `h` or `d`; a bare number is in `bareUnit` (the unit the variable
 * always took). `wholeSeconds`: the value is used in seconds.
 */
export function duration(minMs: number, maxMs: number, bareUnit: 'ms' | 's' = 's', wholeSeconds = false): Kind<number> {
  const accepts = `a duration from \`${spelled(minMs)}\` to \`${spelled(maxMs)}\` (\`ms\`, \`s\`, \`m\`, \`h\` or \`d\`; a bare number is ${bareUnit === 's' ? 'seconds' : 'milliseconds'})`;
  return {
    accepts,
    parse(raw, name) {
      const ms = durationMs(raw, bareUnit);
      if (ms === undefined || ms < minMs || ms > maxMs || (wholeSeconds && ms % 1000 !== 0)) throw refuse(name, accepts, raw);
      return ms;
    },
  };
}

/** "10s,1m,5m" → [10000, 60000, 300000]. */
export const durationList: Kind<number[]> = {
  accepts: 'durations separated by commas (`10s,1m,5m`: `ms`, `s`, `m`, `h` or `d`; a bare number is seconds)',
  parse(raw, name) {
    return raw.split(',').map((item) => {
      const ms = durationMs(item, 's');
      if (ms === undefined) throw new ConfigError(name, `"${item.trim()}" is not a duration like 10s, 5m or 2h`);
      return ms;
    });
  },
};

/** Switchboard's own switches; OpenTelemetry's keep the specification's spelling (otelBoolean). */
export const boolean: Kind<boolean> = {
  accepts: '`true` or `false` (also `1`/`0`, `yes`/`no`, any case)',
  parse(raw, name) {
    const value = raw.toLowerCase();
    if (['true', '1', 'yes'].includes(value)) return true;
    if (['false', '0', 'no'].includes(value)) return false;
    throw refuse(name, boolean.accepts, raw);
  },
};

/** The OpenTelemetry specification's boolean: `true` or `false`, any case. */
export const otelBoolean: Kind<boolean> = {
  accepts: "`true` or `false`, any case (the OpenTelemetry specification's rule)",
  parse(raw, name) {
    const value = raw.toLowerCase();
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw refuse(name, otelBoolean.accepts, raw);
  },
};

export interface RateLimitSetting {
  max: number;
  windowMs: number;
}

const RATE_UNITS: Record<string, number> = {
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
};

/** "300/min" → {max: 300, windowMs: 60000}. */
export const rate: Kind<RateLimitSetting> = {
  accepts:
    'a count per second, minute or hour: `N/s`, `N/min` or `N/hour` (`N/sec`, `N/second`, `N/m`, `N/minute`, `N/h` too), N at least 1',
  parse(raw, name) {
    const match = /^(\d+)\s*\/\s*([a-z]+)$/.exec(raw);
    const windowMs = match ? RATE_UNITS[match[2]!] : undefined;
    if (!match || windowMs === undefined || Number(match[1]) < 1) {
      throw refuse(name, rate.accepts, raw);
    }
    return { max: Number(match[1]), windowMs };
  },
};

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, kib: 1024, mb: 1024 ** 2, mib: 1024 ** 2, gb: 1024 ** 3, gib: 1024 ** 3 };

/** A size in bytes, from min to max: a number with `B`, `KB`, `MB` or `GB` (1024-based, any case); a bare number is bytes. */
export const SIZE_SPELLING =
  'a whole number with `B`, `KB`, `MB` or `GB` (1024-based, any case; `KiB`, `MiB`, `GiB` too); a bare number is bytes';

export function size(min: number, max: number): Kind<number> {
  const accepts = `a size from ${min} to ${max} bytes: ${SIZE_SPELLING}`;
  return {
    accepts,
    parse(raw, name) {
      const match = /^(\d+)\s*([a-z]+)?$/i.exec(raw);
      const unit = SIZE_UNITS[(match?.[2] ?? 'b').toLowerCase()];
      const bytes = match && unit ? Number(match[1]) * unit : Number.NaN;
      if (!(bytes >= min && bytes <= max)) throw refuse(name, accepts, raw);
      return bytes;
    },
  };
}

/** One of a fixed list of words, any case. */
export function choice<T extends string>(words: readonly T[]): Kind<T> {
  const accepts = words.length === 2 ? `\`${words[0]}\` or \`${words[1]}\`` : `one of ${words.map((word) => `\`${word}\``).join(', ')}`;
  return {
    accepts,
    parse(raw, name) {
      const value = raw.toLowerCase() as T;
      if (!words.includes(value)) throw refuse(name, accepts, raw);
      return value;
    },
  };
}

/** An absolute URL with one of `protocols`; the message never repeats it (it may hold a password). */
export function url(protocols: readonly string[], example: string): Kind<string> {
  const names = protocols.map((protocol) => `\`${protocol}//\``).join(' or ');
  return {
    accepts: `an absolute ${names} URL (\`${example}\`) of printable ASCII without spaces (percent-encode anything else)`,
    parse(raw, name) {
      let parsed: URL;
      try {
        parsed = new URL(raw);
      } catch {
        throw new ConfigError(name, 'must be an absolute URL');
      }
      // Parsing dropped any CR, LF and TAB: BASE_URL is written into e-mails and pages as given.
      const characters = urlCharacterProblem(raw);
      if (characters) throw new ConfigError(name, characters);
      if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must use ${protocols.join(' or ')}`);
      return raw;
    },
  };
}

/** Any text (a host name, a path): checked where it is used. */
export function text(accepts: string): Kind<string> {
  return { accepts, parse: (raw) => raw };
}
