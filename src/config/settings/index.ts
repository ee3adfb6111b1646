// The registry: every environment variable Switchboard reads, in the order
// docs/configuration.md lists them. To add one, declare it in its group's
// file (name, kind, default, meaning), read it in config.ts, then run
// `npm run docs:config` and add it to .env.example (tests check both).
import { ConfigError } from '../config-error.ts';
import type { Setting, SettingGroup } from '../setting.ts';
import { ALERTS } from './alerts.ts';
import { LIMITS } from './limits.ts';
import { MCP } from './mcp.ts';
import { OAUTH } from './oauth.ts';
import { OPERATIONS } from './operations.ts';
import { SECRETS } from './secrets.ts';
import { DATABASE, LOGS, SERVER } from './server.ts';
import { TRACES } from './traces.ts';
import { WEBHOOKS } from './webhooks.ts';

export const SETTING_GROUPS: readonly SettingGroup[] = [
  { title: 'Server', settings: SERVER },
  { title: 'Database', settings: DATABASE },
  { title: 'Secrets', settings: SECRETS },
  { title: 'OAuth', settings: OAUTH },
  { title: 'MCP', settings: MCP },
  { title: 'Webhooks and delivery', settings: WEBHOOKS },
  { title: 'Rate limits, Redis and caches', settings: LIMITS },
  { title: 'Alert e-mails', settings: ALERTS },
  { title: 'Operations', settings: { ...OPERATIONS, ...LOGS } },
  {
    title: 'Traces (OpenTelemetry)',
    introduction:
      "The standard [OTEL_* variables](https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/), with the specification's spellings (a switch is `true` or `false`, durations are milliseconds); traces are exported only when asked for. The W3C `traceparent` on every delivery works either way ([interface.md §6.1](interface.md#61-the-request)).",
    settings: TRACES,
  },
];

export const SETTINGS = {
  ...SERVER,
  ...DATABASE,
  ...SECRETS,
  ...OAUTH,
  ...MCP,
  ...WEBHOOKS,
  ...LIMITS,
  ...ALERTS,
  ...OPERATIONS,
  ...LOGS,
  ...TRACES,
};
export type SettingName = keyof typeof SETTINGS;

type ValueOf<S> = S extends Setting<infer T, infer D> ? (D extends string ? T : T | undefined) : never;

/**
 * One variable's value: parsed by its kind, or its default when unset or
 * blank. A bad value throws a ConfigError naming the variable.
 */
export function readSetting<N extends SettingName>(env: NodeJS.ProcessEnv, name: N): ValueOf<(typeof SETTINGS)[N]> {
  const declared: Setting = SETTINGS[name];
  if (declared.readBySdk) throw new ConfigError(name, 'is read by the OpenTelemetry SDK, not by Switchboard');
  const raw = env[name]?.trim() || declared.default;
  return (raw === undefined ? undefined : declared.kind.parse(raw, name)) as ValueOf<(typeof SETTINGS)[N]>;
}
