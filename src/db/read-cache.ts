// Reads kept in memory for as long as the database has not changed at all: the token lookup of
// every authenticated API request, and the pages of the public post list.
//
// Issue 2 allows a cache only if it honours a revocation at once, in every instance. On SQLite
// every instance shares one file, and two counters say whether anything in it changed:
// - the commit watch (src/db/commit-watch.ts: SQLite's WAL-index header, or `PRAGMA
//   data_version`) moves when another connection (another process: a second instance, the CLI)
//   commits anything;
// - `total_changes()` moves with every row this connection writes, committed or not (our own
//   revocations, user updates, last_used_at, sessions…).
// Both are read before every lookup; if either moved, the whole cache is dropped. So a cached
// value is always what the database would answer: no call site has to remember to invalidate
// anything. While this connection is inside a transaction, nothing is read from or written to
// the cache (its uncommitted rows could still roll back). A value that depends on the clock as
// well (a post list, where a scheduled post appears at its time) says until when it holds.
//
// PostgreSQL has no such synchronous counter (LISTEN/NOTIFY arrives after the commit, so a
// revoked token could pass for a moment on another instance): there, every request reads the
// database, and `createReadCache` returns null.
import type SQLite from 'better-sqlite3';
import type { CommitWatch } from './commit-watch.js';
import type { Db } from './connect.js';

/** A value and the time (ms since the epoch) until which it holds even if nothing is written; null: until a write. */
export type Held<Value> = { value: Value; until: number | null };

export class ReadCache<Key, Value> {
  private readonly entries = new Map<Key, Held<Value>>();
  private commitsSeen: unknown = null;
  private changes: unknown = null;
  /** Counts the times the cache was dropped: a value loaded across a drop is not kept. */
  private generation = 0;
  private changesProbe: SQLite.Statement | null = null;

  /** `maxEntries`: at most this many values are kept; the oldest goes first. */
  constructor(
    private readonly handle: SQLite.Database,
    private readonly commits: CommitWatch,
    private readonly maxEntries: number,
  ) {}

  /**
   * The kept value for this key, without reading the database: undefined when none is kept (or
   * a transaction is open). The same check as get(): a change anywhere drops everything first.
   * For callers that answer at once when they can (the token check of every API request) and
   * fall back to get() otherwise.
   */
  peek(key: Key, now = Date.now()): Value | undefined {
    if (this.check() === null) return undefined;
    const cached = this.entries.get(key);
    return cached !== undefined && (cached.until === null || cached.until > now) ? cached.value : undefined;
  }

  /**
   * The value for this key; `load` reads the database on a miss. Nothing is kept while a
   * transaction is open on this connection, nor when `load` finds nothing (undefined).
   */
  async get(key: Key, load: () => Promise<Held<Value> | undefined>, now = Date.now()): Promise<Value | undefined> {
    const generation = this.check();
    if (generation === null) return (await load())?.value;
    const cached = this.entries.get(key);
    if (cached !== undefined && (cached.until === null || cached.until > now)) return cached.value;
    const loaded = await load();
    // Other requests may have run while it loaded: the value is kept only if the database did
    // not change in the meantime (a second check that drops the cache, or found it dropped, says so).
    if (loaded === undefined || this.check() !== generation) return loaded?.value;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as Key);
    this.entries.set(key, loaded);
    return loaded.value;
  }

  /** How many values are kept (tests). */
  get size(): number {
    return this.entries.size;
  }

  // The generation the cache is valid for, after dropping every entry if the database changed
  // since the last check; null inside a transaction (the cache is not used then).
  private check(): number | null {
    if (this.handle.inTransaction) return null;
    this.changesProbe ??= this.handle.prepare('SELECT total_changes()').pluck();
    const commits = this.commits.current();
    const changes = this.changesProbe.get();
    if (commits !== this.commitsSeen || changes !== this.changes) {
      this.entries.clear();
      this.generation += 1;
      this.commitsSeen = commits;
      this.changes = changes;
    }
    return this.generation;
  }
}

/** A cache for this database, or null where it could not honour a change at once (PostgreSQL). */
export function createReadCache<Key, Value>(db: Db, maxEntries: number): ReadCache<Key, Value> | null {
  return db.sqlite === null || db.commits === null ? null : new ReadCache<Key, Value>(db.sqlite, db.commits, maxEntries);
}
