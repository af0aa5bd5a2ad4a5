// The database's failures, logged once per kind and interval (src/lib/failure-log.ts), and its
// recovery once: when the write probe (write-probe.ts) commits again and nothing failed since.
// One log per Db, shared by whoever meets a failure of it: the error handler's "request failed",
// the pool's lost connections, the bookkeeping writes that are dropped. The app points it at its
// logger (logOutagesTo); until then (the CLI) lines go to stderr as JSON.
import { FailureLog, type FailureSink } from '../lib/failure-log.js';
import type { Db } from './connect.js';
import { isDatabaseUnwritable } from './errors.js';
import { writeProbeOf } from './write-probe.js';

/** How long the same failure is counted before one line reports the count. */
export const OUTAGE_INTERVAL_MS = 10_000;
/** How often the write probe is asked, while failures are open, whether the database is back. */
const RECOVERY_PROBE_MS = 1000;

const stderrSink: FailureSink = {
  error: (details, message) => process.stderr.write(`${JSON.stringify({ level: 'error', msg: message, ...details })}\n`),
  info: (details, message) => process.stderr.write(`${JSON.stringify({ level: 'info', msg: message, ...details })}\n`),
};

const sinks = new WeakMap<Db, FailureSink>();
const logs = new WeakMap<Db, FailureLog>();

/** Sends the database's failure lines to `sink` (the app's logger). */
export function logOutagesTo(db: Db, sink: FailureSink): void {
  sinks.set(db, sink);
}

/** The one failure log of this database connection. */
export function outageLogOf(db: Db): FailureLog {
  let log = logs.get(db);
  if (log === undefined) {
    const sink: FailureSink = {
      error: (details, message) => (sinks.get(db) ?? stderrSink).error(details, message),
      info: (details, message) => (sinks.get(db) ?? stderrSink).info(details, message),
    };
    const probe = writeProbeOf(db);
    log = new FailureLog(sink, { intervalMs: OUTAGE_INTERVAL_MS, probe: () => probe.check(), probeEveryMs: RECOVERY_PROBE_MS, recoveredMessage: 'database recovered' });
    logs.set(db, log);
  }
  return log;
}

/** The error's code (SQLITE_FULL, ECONNREFUSED, 53100…), or its class's name: what makes two failures the same. */
export function failureKind(error: unknown): string {
  const e = error as { code?: unknown; name?: unknown } | null;
  if (typeof e?.code === 'string') return e.code;
  return typeof e?.name === 'string' ? e.name : typeof error;
}

/**
 * A bookkeeping write (a token's last use, a session's idle time, a device seen) that failed:
 * logged, once per kind and interval, and dropped. It never fails the request that caused it.
 */
export function bookkeepingFailed(db: Db, what: string, error: unknown): void {
  if (isDatabaseUnwritable(error)) writeProbeOf(db).failed();
  outageLogOf(db).failed(`bookkeeping|${what}|${failureKind(error)}`, 'bookkeeping write failed', { what }, error);
}
