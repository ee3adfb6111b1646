/** Seconds until the longest block among `rules` ends, or 0 when none has reached its limit. */
export async function secondsBlocked(db, rules) {
    const { rows } = await db.query(`SELECT ceil(max(extract(epoch FROM f.window_started_at + make_interval(secs => f.window_seconds) - now())))::int AS wait
       FROM login_failures f
       JOIN unnest($1::text[], $2::int[]) AS r(subject, max) ON r.subject = f.subject
      WHERE f.failures >= r.max AND f.window_started_at + make_interval(secs => f.window_seconds) > now()`, [rules.map((r) => r.subject), rules.map((r) => r.max)]);
    return Math.max(0, rows[0]?.wait ?? 0);
}
/** Counts one failure for each rule's subject; a window that has run out starts again at 1. */
export async function countFailure(db, rules) {
    await db.query(`INSERT INTO login_failures AS f (subject, failures, window_started_at, window_seconds)
     SELECT subject, 1, now(), window_seconds FROM unnest($1::text[], $2::int[]) AS r(subject, window_seconds)
     ON CONFLICT (subject) DO UPDATE SET
       failures = CASE WHEN f.window_started_at + make_interval(secs => f.window_seconds) <= now() THEN 1 ELSE f.failures + 1 END,
       window_started_at = CASE WHEN f.window_started_at + make_interval(secs => f.window_seconds) <= now() THEN now() ELSE f.window_started_at END,
       window_seconds = EXCLUDED.window_seconds`, [rules.map((r) => r.subject), rules.map((r) => r.windowSeconds)]);
}
export async function clearFailures(db, subject) {
    await db.query('DELETE FROM login_failures WHERE subject = $1', [subject]);
}
/** Rows whose window ended long ago (housekeeping). */
export async function deleteStaleFailures(db) {
    const { rowCount } = await db.query(`DELETE FROM login_failures WHERE window_started_at + make_interval(secs => window_seconds) < now() - interval '1 hour'`);
    return rowCount ?? 0;
}
//# sourceMappingURL=login-throttle.queries.js.map