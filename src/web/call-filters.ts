// The calls page's filters, read from the query string: a creation-date range
// (whole UTC days, both ends included), a status and an agent. The same
// filters drive the list, its pages and the CSV export, and travel in every
// link between them.
import type { CallFilters } from '../calls/calls.queries.ts';
import type { FieldErrors } from './forms.ts';
import { isUuid } from './forms.ts';

export const FILTER_NAMES = ['from', 'to', 'status', 'agent'] as const;
export type FilterValues = Record<(typeof FILTER_NAMES)[number], string>;

const DAY_MS = 86_400_000;
const STATUSES = new Set(['in_progress', 'completed']);

function day(value: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const date = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value ? undefined : date;
}

export interface ParsedFilters {
  values: FilterValues;
  filters: CallFilters;
  errors: FieldErrors;
}

export function parseCallFilters(query: Record<string, unknown>): ParsedFilters {
  const values = Object.fromEntries(
    FILTER_NAMES.map((n) => [n, typeof query[n] === 'string' ? (query[n] as string).trim() : '']),
  ) as FilterValues;
  const filters: CallFilters = {};
  const errors: FieldErrors = {};
  if (values.from) {
    const from = day(values.from);
    if (from) filters.from = from;
    else errors.from = 'Enter a date as YYYY-MM-DD.';
  }
  if (values.to) {
    const to = day(values.to);
    if (to) filters.before = new Date(to.getTime() + DAY_MS);
    else errors.to = 'Enter a date as YYYY-MM-DD.';
  }
  if (filters.from && filters.before && filters.before <= filters.from) errors.to = 'Choose a date on or after the start date.';
  if (values.status) {
    if (STATUSES.has(values.status)) filters.status = values.status as CallFilters['status'] & string;
    else errors.status = 'Choose a status from the list.';
  }
  if (values.agent) {
    if (isUuid(values.agent)) filters.agentId = values.agent;
    else errors.agent = 'Choose an agent from the list.';
  }
  return { values, filters, errors };
}

/** The filters as a query string ('' when none), for links that must keep them. */
export function filterQuery(values: FilterValues, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) if (values[name]) params.set(name, values[name]);
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  const query = params.toString();
  return query ? `?${query}` : '';
}
