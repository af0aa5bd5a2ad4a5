// Whether the database can store a write, for GET /up and for noticing the end of an outage.
// `select 1` answers on a full disk: reads work, every write fails. So the probe commits a real
// write that touches no row: on SQLite it rewrites the header's user_version with its own value
// (one page appended to the WAL, SQLITE_FULL when the disk is full; no table, trigger or read
// cache sees it); on PostgreSQL it takes a transaction id (`txid_current()`), so the commit
// writes and flushes a WAL record. A 53100 from a full tablespace that leaves pg_wal room is not
// seen by it; the requests that meet one still answer 503 and mark the database unwritable.
//
// One probe per Db, run at most once per OK_FOR_MS while it succeeds (a load balancer asking
// every second costs one write every few seconds) and at most once per FAILED_FOR_MS after a
// failure (so a freed disk shows within a second). Concurrent askers share the probe under way.
import { sql } from 'kysely';
import type { Db } from './connect.js';

const OK_FOR_MS = 5000;
const FAILED_FOR_MS = 1000;

export class WriteProbe {
  private writable = true;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private running: Promise<boolean> | null = null;

  constructor(
    private readonly write: () => Promise<void>,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Whether a write commits, from the last probe if it is recent enough, else from a new one. */
  check(): Promise<boolean> {
    const age = this.clock() - this.checkedAt;
    if (age < (this.writable ? OK_FOR_MS : FAILED_FOR_MS)) return Promise.resolve(this.writable);
    this.running ??= this.write().then(
      () => this.settle(true),
      () => this.settle(false),
    );
    return this.running;
  }

  /** The last answer, without probing: for a caller that must not wait. */
  get lastKnown(): boolean {
    return this.writable;
  }

  /**
   * A request's write has just failed for want of space: believed at once (GET /up says so
   * before its next probe), and the next check() probes again after FAILED_FOR_MS.
   */
  failed(): void {
    this.writable = false;
    this.checkedAt = this.clock();
  }

  private settle(writable: boolean): boolean {
    this.writable = writable;
    this.checkedAt = this.clock();
    this.running = null;
    return writable;
  }
}

const probes = new WeakMap<Db, WriteProbe>();

/** The one write probe of this database connection. */
export function writeProbeOf(db: Db): WriteProbe {
  let probe = probes.get(db);
  if (probe === undefined) {
    probe = new WriteProbe(() => probeWrite(db));
    probes.set(db, probe);
  }
  return probe;
}

async function probeWrite(db: Db): Promise<void> {
  if (db.dialect === 'postgres') {
    await sql`select txid_current()`.execute(db.kysely);
    return;
  }
  // Through Kysely, not the raw handle: its connection lock keeps the probe out of a
  // transaction under way on the same connection.
  const row = await sql.raw<{ user_version: number }>('pragma user_version').execute(db.kysely);
  const version = Number(row.rows[0]?.user_version ?? 0);
  await sql.raw(`pragma user_version = ${Number.isInteger(version) ? version : 0}`).execute(db.kysely);
}
