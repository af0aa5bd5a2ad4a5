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
//   transaction as every change that matters (migration 2026_11_24_000001), and `session_version`,
//   moved by every change to a session (migration 2026_11_29_000001). Reading them is a round
//   trip, so the requests that ask within one event-loop turn share one query, sent at the end of
//   that turn: after every one of them arrived, so it sees every commit that was acknowledged
//   before any of them was sent. Under load that is one query for many requests, instead of one
//   or more each; and a request that has one answered asks no more (every later kept read of the
//   request may use it).
//
// A value that depends on the clock as well (a post list, where a scheduled post appears at its
// time) says until when it holds.
import { AsyncLocalStorage } from 'node:async_hooks';
import type SQLite from 'better-sqlite3';
import type { PipelinedReads } from './pipelined-reads.js';
import type { MaybePromise } from '../lib/maybe-promise.js';
import type { CommitWatch } from './commit-watch.js';

/** A value and the time (ms since the epoch) until which it holds even if nothing is written; null: until a write. */
export type Held<Value> = { value: Value; until: number | null };

/**
 * A number that grows whenever the database changes: `sync` sources answer at once (null while
 * the cache must not be used), the others after a query, or at once (`known`) when a look valid
 * for the current request has already answered.
 */
export type ChangeSource =
  | { readonly sync: true; version(): number | null }
  | { readonly sync: false; known(): number | undefined; version(): Promise<number> };

/**
 * SQLite: another connection's commits (the commit watch) and this connection's own writes.
 *
 * Within a request (request(), from perf/request-looks.ts) the commit watch is read once, at the
 * first look: that reading was taken after the request arrived, so it shows every commit
 * acknowledged before, as PostgreSQL's one look a request does (a read of the -shm file is a
 * system call, 2 µs on this machine, and a signed-in page looked three or four times). This
 * connection's own writes are counted at every look (`total_changes()`, no system call). Two
 * requests in flight may hold readings of different age: only a newer one moves the counter.
 */
export class SqliteChanges {
  readonly sync = true;
  private commitsSeen = -1;
  private changesSeen: unknown = null;
  private counter = 0;
  private changesProbe: SQLite.Statement | null = null;
  private readonly requests = new AsyncLocalStorage<{ commits: number }>();

  constructor(
    private readonly handle: SQLite.Database,
    private readonly commits: CommitWatch,
  ) {}

  /** Runs `fn` (and the asynchronous work it starts) as a request that arrived now. */
  request<T>(fn: () => T): T {
    return this.requests.run({ commits: -1 }, fn);
  }

  version(): number | null {
    if (this.handle.inTransaction) return null;
    this.changesProbe ??= this.handle.prepare('SELECT total_changes()').pluck();
    const scope = this.requests.getStore();
    let commits: number;
    if (scope === undefined) commits = this.commits.current();
    else {
      if (scope.commits < 0) scope.commits = this.commits.current();
      commits = scope.commits;
    }
    const changes = this.changesProbe.get();
    if (commits > this.commitsSeen || changes !== this.changesSeen) {
      this.commitsSeen = Math.max(commits, this.commitsSeen);
      this.changesSeen = changes;
      this.counter += 1;
    }
    return this.counter;
  }
}

/** What one look at PostgreSQL's counters answered. */
type Look = { data: number; sessions: number; tokens: number };

/**
 * PostgreSQL: the trigger-kept counters, `data_version` (what the caches keep of posts, users,
 * tokens and settings), `session_version` (the sessions) and `token_version` (the tokens, their
 * last use included), read together in one look.
 *
 * Which looks a read may use: one sent after its request arrived (request(), carried through the
 * request's asynchronous work by an AsyncLocalStorage) and after the last write this process
 * completed (noteWrite(): a look sent before it may not see it). Such a look sees every commit
 * acknowledged before the request arrived, so every kept read of a request shares the first one:
 * once it has answered the others know at once (known()), and a look already out that qualifies
 * is joined. A read outside any request (a CLI command, a test) qualifies only a look sent after
 * it asked. Otherwise a read joins the next look, not yet sent: it is sent at the end of the
 * event-loop turn, or when the look before it has answered if one is still out. So at most one
 * is out at a time, and under load each covers every request that arrived while the previous one
 * was out.
 */
export class PostgresChanges {
  readonly sync = false;
  /** The sessions' counter, from the same looks. */
  readonly sessions: ChangeSource;
  /** The tokens' counter (any change to a token, its last use included), from the same looks. */
  readonly tokens: ChangeSource;
  /**
   * The data's and the tokens' counters together (their sum, which grows when either does), from
   * the same looks: for a read that shows both (the panel's users and their numbers of tokens).
   */
  readonly dataOrTokens: ChangeSource;
  private readonly requests = new AsyncLocalStorage<number>();
  /** Looks sent so far: the n-th look sent is number n. */
  private sent = 0;
  /** The looks sent before the last write this process completed: none of them may see it. */
  private fence = 0;
  /** The newest look answered, and its number. */
  private answered: { number: number; look: Look } | null = null;
  /** The look out (sent, not answered), and its number. */
  private out: { number: number; look: Promise<Look> } | null = null;
  // The next look, not yet sent: anyone may join it.
  private next: Promise<Look> | null = null;

  /** `connection`: where the looks go (the pipelined reads' connection, db/connect.ts). */
  constructor(private readonly connection: Pick<PipelinedReads, 'query'>) {
    // Each counter of the look as a change source of its own: one look answers them all.
    const counter = (of: (look: Look) => number): ChangeSource => ({
      sync: false,
      known: () => {
        const look = this.knownLook();
        return look === undefined ? undefined : of(look);
      },
      version: () => this.look().then(of),
    });
    this.sessions = counter((look) => look.sessions);
    this.tokens = counter((look) => look.tokens);
    this.dataOrTokens = counter((look) => look.data + look.tokens);
  }

  /** Runs `fn` (and the asynchronous work it starts) as a request that arrived now. */
  request<T>(fn: () => T): T {
    return this.requests.run(this.sent, fn);
  }

  /** Says that a write of this process has completed: the looks sent before it are not enough. */
  noteWrite(): void {
    this.fence = this.sent;
  }

  known(): number | undefined {
    return this.knownLook()?.data;
  }

  version(): Promise<number> {
    return this.look().then((look) => look.data);
  }

  /** The looks numbered above this one may answer the current read. */
  private floor(): number {
    const arrived = this.requests.getStore() ?? this.sent;
    return arrived > this.fence ? arrived : this.fence;
  }

  private knownLook(): Look | undefined {
    const answered = this.answered;
    return answered !== null && answered.number > this.floor() ? answered.look : undefined;
  }

  private look(): Promise<Look> {
    const floor = this.floor();
    const answered = this.answered;
    if (answered !== null && answered.number > floor) return Promise.resolve(answered.look);
    if (this.out !== null && this.out.number > floor) return this.out.look;
    this.next ??= new Promise<Look>((resolve, reject) => {
      const send = () => {
        this.next = null;
        const number = (this.sent += 1);
        const look = this.connection
          .query<[string, string, string]>({
            name: 'data_version',
            text: 'select (select n from data_version where id = 1), (select n from session_version where id = 1), (select n from token_version where id = 1)',
            rowMode: 'array',
          })
          .then((result): Look => ({ data: Number(result.rows[0]?.[0]), sessions: Number(result.rows[0]?.[1]), tokens: Number(result.rows[0]?.[2]) }));
        const out = { number, look };
        this.out = out;
        const done = () => {
          if (this.out === out) this.out = null;
        };
        void look.then(
          (answer) => {
            if (this.answered === null || this.answered.number < number) this.answered = { number, look: answer };
          },
          () => {},
        );
        look.then(resolve, reject);
        void look.then(done, done);
      };
      if (this.out === null) setImmediate(send);
      // When the look already out fails (a database that stopped answering: its query_timeout),
      // the reads waiting for the next one fail with it instead of each sending another and
      // waiting as long again, so every request still ends within one query timeout.
      else
        void this.out.look.then(send, (error: unknown) => {
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
   * open, or the database can only say later whether it changed (PostgreSQL, before a look valid
   * for this request has answered). The same check as get(): a change anywhere drops everything
   * first. For callers that answer at once when they can (the token check of every API request)
   * and fall back to get() otherwise.
   */
  peek(key: Key, now = Date.now()): Value | undefined {
    const version = this.changes.sync ? this.changes.version() : this.changes.known();
    if (version === null || version === undefined) return undefined;
    this.advance(version);
    return this.fresh(key, now);
  }

  /**
   * The value for this key; `load` reads the database on a miss. Nothing is kept while a
   * transaction is open on this connection (SQLite), nor when `load` finds nothing (undefined).
   */
  async get(key: Key, load: () => Promise<Held<Value> | undefined>, now = Date.now()): Promise<Value | undefined> {
    const version = this.changes.sync ? this.changes.version() : (this.changes.known() ?? (await this.changes.version()));
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
