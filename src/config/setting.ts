// One environment variable as the registry (settings/index.ts) declares it:
// what it accepts (its kind's parser and sentence), its default and what it
// means. docs/configuration.md, `--help` and the errors of a bad value are
// written from these declarations.
import type { Kind } from './kinds.ts';

export interface Setting<T = unknown, D extends string | undefined = string | undefined> {
  kind: Kind<T>;
  /** The value an unset (or blank) variable takes, parsed like a given one; undefined: none, see defaultText. */
  default: D;
  /** The docs' default column when `default` is not the whole story (`unset`, `derived`, `generated into DATA_DIR`). */
  defaultText?: string;
  /** What it does, for docs/configuration.md (Markdown); its first sentence is its `--help` line. */
  meaning: string;
  /** Read by the OpenTelemetry SDK itself: listed for the docs, never parsed here. */
  readBySdk?: boolean;
}

export interface SettingGroup {
  title: string;
  /** A paragraph under the group's heading in docs/configuration.md. */
  introduction?: string;
  settings: Record<string, Setting>;
}

/** Declares a setting, keeping its value's type and whether it has a default. */
export function setting<T, D extends string | undefined>(declared: Setting<T, D>): Setting<T, D> {
  return declared;
}
