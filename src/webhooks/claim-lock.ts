// The lock that serialises claims of one subscription's deliveries across
// workers: a transaction-level advisory lock keyed on the subscription id,
// not a lock on its row.
//
// Why not the row: a row lock taken with SKIP LOCKED still waits, without
// limit, when the row has been updated since the statement's snapshot and a
// later version is locked (PostgreSQL locks the whole update chain). Every
// outcome that changes an endpoint's health updates its subscription row, so
// a claim holding one subscription's row waited on a recorder that waited
// for that row: a deadlock under ordinary load. An advisory lock has no
// versions: a claim takes it without ever waiting, and nothing that records
// outcomes takes it at all.
//
// The claim still takes its subscriptions FOR KEY SHARE (claim.queries.ts):
// that is the lock a deletion and a grant's stop (FOR UPDATE, in id order)
// wait for, so a stop that has committed is never followed by an attempt
// that a claim leased before it.
//
// Its key is the advisory locks' scheme (db/advisory-locks.ts), and the same
// as 0.1.0's: (0x53574843 "SWHC", uuid_hash(subscription id)).
import { lockSql, tryLockSql } from '../db/advisory-locks.ts';

/** SQL: takes the claim lock of the subscription `id` (a uuid expression) if free, true if taken; never waits. */
export const tryClaimLock = (id: string): string => tryLockSql('claim', id);

/** SQL: takes the claim lock of the subscription `id`, waiting for a claim that holds it to end. */
export const waitClaimLock = (id: string): string => lockSql('claim', id);
