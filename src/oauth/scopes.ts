// The scopes of docs/interface.md §5.3, with the plain words the consent page shows.
export const SCOPE_DESCRIPTIONS = {
  'calls:read': 'See your organization’s calls and their summaries, and be notified when a call completes',
  'calls:write': 'Record calls for your organization',
  'contacts:read': 'See your contacts',
  'contacts:write': 'Create and change your contacts',
  'leads:read': 'See your leads',
  'leads:write': 'Create and change your leads',
  'audiences:write': 'Create and change your audiences',
  'locations:read': 'See your organization’s locations',
  'locations:write': 'Create and change your organization’s locations',
} as const;

export type Scope = keyof typeof SCOPE_DESCRIPTIONS;

export const SUPPORTED_SCOPES = Object.keys(SCOPE_DESCRIPTIONS) as Scope[];

/** docs/interface.md §5.3: an authorization request without `scope` asks for this. */
export const DEFAULT_SCOPE: Scope = 'calls:read';

export function isSupportedScope(value: string): value is Scope {
  return Object.hasOwn(SCOPE_DESCRIPTIONS, value);
}

/** RFC 6749 §3.3: space-delimited, order irrelevant; duplicates collapse. Empty → []. */
export function parseScope(raw: string): string[] {
  return [...new Set(raw.split(' ').filter((s) => s.length > 0))];
}

/** A stable order (the catalogue's) so stored and returned scope strings compare equal. */
export function normalizeScopes(scopes: readonly string[]): string[] {
  const wanted = new Set(scopes);
  return SUPPORTED_SCOPES.filter((s) => wanted.has(s));
}

export function formatScope(scopes: readonly string[]): string {
  return normalizeScopes(scopes).join(' ');
}
