// How long a call's summary and duration may be: what the route schemas, the
// subscription filters and the checks of callers without a schema (the CLI)
// all hold a call to.

export const SUMMARY_MAX_LENGTH = 10_000;
/** PostgreSQL's integer: the duration_seconds column. */
export const DURATION_MAX_SECONDS = 2_147_483_647;
