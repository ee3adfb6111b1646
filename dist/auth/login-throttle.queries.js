/**
 * Reserves one attempt for every rule's subject in one statement, before the
 * password is checked: concurrent requests serialise on the row lock, so
 * each sees a distinct count and no more than `max` of them can be under the
 * limit. A window that has run out starts again at 1. Subjects are locked in
 * a fixed order (sorted), so two reservations never deadlock.
 */
export async function reserveAttempt(db, rules) {
    const { rows } = await db.query(`INSERT INTO login_failures AS f (subject, failures, window_started_at, window_seconds)
     SELECT subject, 1, now(), window_seconds FROM unnest($1::text[], $2::int[]) AS r(subject, window_seconds) ORDER BY subject
     ON CONFLICT (subject) DO UPDATE SET
       failures = CASE WHEN f.window_started_at + make_interval(secs => f.window_seconds) <= now() THEN 1 ELSE f.failures + 1 END,
       window_started_at = CASE WHEN f.window_started_at + make_interval(secs => f.window_seconds) <= now() THEN now() ELSE f.window_started_at END,
       window_seconds = EXCLUDED.window_seconds
     RETURNING f.subject, f.failures AS attempts,
               greatest(1, ceil(extract(epoch FROM f.window_started_at + make_interval(secs => f.window_seconds) - now())))::int AS seconds_left`, [rules.map((r) => r.subject), rules.map((r) => r.windowSeconds)]);
    return rows;
}
/** Gives reserved attempts back (a success, or an attempt that never reached the password check). */
export async function releaseAttempt(db, subjects) {
    if (subjects.length === 0)
        return;
    await db.query(`WITH emptied AS (DELETE FROM login_failures WHERE subject = ANY ($1::text[]) AND failures <= 1)
     UPDATE login_failures SET failures = failures - 1 WHERE subject = ANY ($1::text[]) AND failures > 1`, [subjects]);
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