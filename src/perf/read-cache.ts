// Reads kept in memory for as long as the database has not changed: the token lookup of every
// authenticated API request, and the pages of the public post list.
//
// A cache is allowed only if it honours a revocation at once, in every instance. So a kept value
// is answered only after a look at the database's change counter, taken after the request
// arrived, has found nothing changed since the value was loaded; anything changed drops every
// entry. No call site has to remember to invalidate anything. Where the counter comes from:
//
// - SQLite (SqliteChanges): every instance shares one file, and two counters say synchronously
//   whether anything in it changed: the commit watch (src/perf/commit-watch.ts: SQLite's WAL-index
//   header, or `PRAGMA data_version`) moves when another connection commits (another process: a
//   second instance, the CLI); `total_changes()` moves with every row this connection writes,
//   committed or not. While this connection is inside a transaction nothing is read from or
//   written to the cache (its uncommitted rows could still roll back).
// - PostgreSQL (PostgresChanges): the `data_version` row, moved by triggers in the same
//   transaction as every change that matters (migration 2026_11_24_000001). Reading it is a round
//   trip, so the requests that ask within one event-loop turn share one query, sent at the end of
//   that turn: after every one of them arrived, so it sees every commit that was acknowledged
//   before any of them was sent. Under load that is one query for many requests, instead of one
//   or more each.
//
// A value that depends on the clock as well (a post list, where a scheduled post appears at its
// time) says until when it holds.
import type SQLite from 'better-sqlite3';
import type pg from 'pg';
import type { MaybePromise } from '../lib/maybe-promise.js';
import type { CommitWatch } from './commit-watch.js';

/** A value and the time (ms since the epoch) until which it holds even if nothing is written; null: until a write. */
export type Held<Value> = { value: Value; until: number | null };

/**
 * A number that grows whenever the database changes: `sync` sources answer at once (null while
 * the cache must not be used), the others after a query.
 */
export type ChangeSource =
  | { readonly sync: true; version(): number | null }
  | { readonly sync: false; version(): Promise<number> };

/** SQLite: another connection's commits (the commit watch) and this connection's own writes. */
export class SqliteChanges {
  readonly sync = true;
  private commitsSeen: unknown = null;
  private changesSeen: unknown = null;
  private counter = 0;
  private changesProbe: SQLite.Statement | null = null;

  constructor(
    private readonly handle: SQLite.Database,
    private readonly commits: CommitWatch,
  ) {}

  version(): number | null {
    if (this.handle.inTransaction) return null;
    this.changesProbe ??= this.handle.prepare('SELECT total_changes()').pluck();
    const commits = this.commits.current();
    const changes = this.changesProbe.get();
    if (commits !== this.commitsSeen || changes !== this.changesSeen) {
      this.commitsSeen = commits;
      this.changesSeen = changes;
      this.counter += 1;
    }
    return this.counter;
  }
}

/**
 * PostgreSQL: the trigger-kept `data_version` row. Every request that asks while no query is
 * waiting to be sent joins the next one; that query is sent at the end of the event-loop turn, or
 * when the query before it has answered if one is still out. So at most one is out at a time, and
 * under load each covers every request that arrived while the previous one was out.
 */
export class PostgresChanges {
  readonly sync = false;
  // The next query, not yet sent: a request may join it. One already sent may have been answered
  // from a snapshot older than the request, so it is never joined.
  private next: Promise<number> | null = null;
  private out: Promise<unknown> | null = null;

  constructor(private readonly pool: pg.Pool) {}

  version(): Promise<number> {
    this.next ??= new Promise<number>((resolve, reject) => {
      const send = () => {
        this.next = null;
        const query = this.pool
          .query<[string]>({ name: 'data_version', text: 'select n from data_version where id = 1', rowMode: 'array' })
          .then((result) => Number(result.rows[0]?.[0]));
        this.out = query;
        const done = () => {
          if (this.out === query) this.out = null;
        };
        query.then(resolve, reject);
        void query.then(done, done);
      };
      if (this.out === null) setImmediate(send);
      // When the query already out fails (a database that stopped answering: its query_timeout),
      // the requests waiting for the next one fail with it instead of each sending another and
      // waiting as long again, so every request still ends within one query timeout.
      else
        void this.out.then(send, (error: unknown) => {
          this.next = null;
          reject(error);
        });
    });
    return this.next;
  }
}

export class ReadCache<Key, Value> {
  private readonly entries = new Map<Key, Held<Value>>();
  /** The newest version seen: every kept value was loaded after a look that found it. */
  private seen = -1;
  /** Counts the times the cache was dropped: a value loaded across a drop is not kept. */
  private generation = 0;

  /** `maxEntries`: at most this many values are kept; the oldest goes first. */
  constructor(
    private readonly changes: ChangeSource,
    private readonly maxEntries: number,
  ) {}

  /**
   * The kept value for this key, without waiting: undefined when none is kept, a transaction is
   * open, or the database can only say later whether it changed (PostgreSQL). The same check as
   * get(): a change anywhere drops everything first. For callers that answer at once when they
   * can (the token check of every API request) and fall back to get() otherwise.
   */
  peek(key: Key, now = Date.now()): Value | undefined {
    if (!this.changes.sync) return undefined;
    const version = this.changes.version();
    if (version === null) return undefined;
    this.advance(version);
    return this.fresh(key, now);
  }

  /**
   * The value for this key; `load` reads the database on a miss. Nothing is kept while a
   * transaction is open on this connection (SQLite), nor when `load` finds nothing (undefined).
   */
  async get(key: Key, load: () => Promise<Held<Value> | undefined>, now = Date.now()): Promise<Value | undefined> {
    const version = this.changes.sync ? this.changes.version() : await this.changes.version();
    if (version === null) return (await load())?.value;
    // A look that is older than the newest seen (PostgreSQL's queries may answer out of order)
    // changes nothing: what is kept is at least as new as what it saw.
    this.advance(version);
    const cached = this.fresh(key, now);
    if (cached !== undefined) return cached;
    const generation = this.generation;
    const loaded = await load();
    if (loaded === undefined) return undefined;
    // Other requests may have run while it loaded: the value is kept only if no change was seen
    // in the meantime (on SQLite, a second look says so at once).
    if (this.changes.sync) {
      const after = this.changes.version();
      if (after === null) return loaded.value;
      this.advance(after);
    }
    if (this.generation !== generation) return loaded.value;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as Key);
    this.entries.set(key, loaded);
    return loaded.value;
  }

  /** How many values are kept (tests). */
  get size(): number {
    return this.entries.size;
  }

  private fresh(key: Key, now: number): Value | undefined {
    const cached = this.entries.get(key);
    return cached !== undefined && (cached.until === null || cached.until > now) ? cached.value : undefined;
  }

  // Drops every entry when the database has changed since the newest version seen.
  private advance(version: number): void {
    if (version <= this.seen) return;
    this.entries.clear();
    this.generation += 1;
    this.seen = version;
  }
}

/**
 * `load` with its answers kept while the database is unchanged: the read caches wrap a repository
 * function this way, so the service calling it cannot tell. A kept answer comes at once (no
 * promise) when the change source can say so at once (SQLite); otherwise after the look.
 * `until` says how long a value holds even without a write (null: until a write); an answer of
 * undefined (nothing found) is never kept.
 */
export function keptWhileUnchanged<Arg, Key, Value>(
  changes: ChangeSource,
  options: { maxEntries: number; key: (arg: Arg) => Key; until?: (value: NonNullable<Value>) => number | null },
  load: (arg: Arg) => Promise<Value>,
): (arg: Arg) => MaybePromise<Value> {
  const cache = new ReadCache<Key, NonNullable<Value>>(changes, options.maxEntries);
  const until = options.until ?? (() => null);
  const held = async (arg: Arg): Promise<Held<NonNullable<Value>> | undefined> => {
    const value = await load(arg);
    return value === undefined || value === null ? undefined : { value, until: until(value) };
  };
  return (arg) => {
    const key = options.key(arg);
    const now = Date.now();
    const kept = cache.peek(key, now);
    if (kept !== undefined) return kept;
    // get() answers undefined only where `load` did, so the answer is one of `load`'s.
    return cache.get(key, () => held(arg), now) as Promise<Value>;
  };
}
