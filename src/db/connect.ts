// Opens the one query layer (Kysely) on SQLite (better-sqlite3) or PostgreSQL (pg), chosen by
// DATABASE_URL. `Db` also carries the raw driver so hot paths can run statements prepared once.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql, type CompiledQuery, type Transaction } from 'kysely';
import pg from 'pg';
import { CommitWatch } from '../perf/commit-watch.js';
import { PostgresChanges, SqliteChanges, type ChangeSource } from '../perf/read-cache.js';
import { PipelinedReads } from '../perf/pipelined-reads.js';
import { KeptPlanSqliteDialect, withStatementCache } from '../perf/statement-cache.js';
import { readsOnly, watchWrites } from '../perf/watched-writes.js';
import type { Database } from './types.js';

export type Dialect = 'sqlite' | 'postgres';

export type Db = {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** Present on SQLite: the better-sqlite3 handle Kysely uses. */
  sqlite: SQLite.Database | null;
  /** Present on SQLite: says when other connections have committed (src/perf/commit-watch.ts). */
  commits: CommitWatch | null;
  /** Present on PostgreSQL: the pool Kysely uses. */
  pool: pg.Pool | null;
  /** Present on PostgreSQL: the one pipelined connection of statement() reads (perf/pipelined-reads.ts). */
  reads: PipelinedReads | null;
  /** Says whether the database changed, for the read caches (src/perf/read-cache.ts). */
  changes: ChangeSource;
  /** Says whether the sessions changed (the same as `changes` on SQLite). */
  sessionChanges: ChangeSource;
  /** Says whether any token changed, its last use included (the same as `changes` on SQLite). */
  tokenChanges: ChangeSource;
  /** Says whether the database or any token changed (the same as `changes` on SQLite). */
  dataOrTokenChanges: ChangeSource;
  close(): Promise<void>;
};

export type ConnectOptions = {
  /** PostgreSQL only: schema to put first on the search_path (tests use one schema each). */
  schema?: string;
  /** PostgreSQL only: pool size. */
  poolSize?: number;
  /**
   * PostgreSQL only: the per-statement limits that turn a stalled database into a 503 for the
   * service. Off for migrations and the CLI, where a long CREATE INDEX is legitimate.
   */
  requestTimeouts?: boolean;
  /**
   * SQLite in memory only: the database starts as this image (better-sqlite3's serialize()),
   * as the tests' migrated template is copied into each app's database.
   */
  sqliteImage?: Buffer;
};

// PostgreSQL returns timestamptz as Date and int8 as string; the app works with ISO strings and
// numbers on both databases, so the parsers are set per connection (not on the global pg.types).
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 1184 || oid === 1114) return (value: string) => new Date(value.length === 19 ? `${value}Z` : value).toISOString();
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/** The path of a `sqlite:` URL as written (`sqlite:./data/app.db` → `./data/app.db`), for messages. */
export function sqliteUrlPath(url: string): string {
  return url.replace(/^sqlite:(\/\/)?/, '');
}

/** The absolute path of the file a `sqlite:` URL names; null for an in-memory database. */
export function sqliteFile(url: string): string | null {
  const path = sqliteUrlPath(url);
  return path === ':memory:' || path === '' ? null : resolve(path);
}

/** Connects to the database named by `url` (sqlite:./file.db, sqlite::memory:, postgres://…). */
export function connect(url: string, options: ConnectOptions = {}): Db {
  if (url.startsWith('sqlite:')) {
    const path = sqliteFile(url) ?? ':memory:';
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const handle = path === ':memory:' && options.sqliteImage !== undefined ? new SQLite(options.sqliteImage) : new SQLite(path);
    // WAL lets readers run beside the writer; NORMAL is durable across process crashes in WAL
    // mode; busy_timeout makes a second writer wait instead of failing with SQLITE_BUSY.
    handle.pragma('journal_mode = WAL');
    handle.pragma('synchronous = NORMAL');
    handle.pragma('foreign_keys = ON');
    handle.pragma('busy_timeout = 5000');
    const kysely = new Kysely<Database>({ dialect: new KeptPlanSqliteDialect({ database: withStatementCache(handle) }) });
    const commits = new CommitWatch(handle, path === ':memory:' ? null : path);
    const changes = new SqliteChanges(handle, commits);
    return {
      kysely,
      dialect: 'sqlite',
      sqlite: handle,
      commits,
      pool: null,
      reads: null,
      changes,
      sessionChanges: changes,
      tokenChanges: changes,
      dataOrTokenChanges: changes,
      // The watch's descriptor is closed only after the connection (see commit-watch.ts).
      close: async () => {
        await kysely.destroy();
        // Kysely closes the handle only if it ever ran a query through it.
        if (handle.open) handle.close();
        commits.close();
      },
    };
  }
  const connection = {
    connectionString: url,
    types: pgTypes,
    connectionTimeoutMillis: 3000,
    ...(options.requestTimeouts === false
      ? {}
      : {
          // A statement never holds a request longer than this; the API answers 503 instead of hanging.
          statement_timeout: 3000,
          // A server (or network) that stops answering cannot enforce statement_timeout: the client
          // gives up on its own a little later, so a request still ends in 503 within 5 s.
          query_timeout: 3500,
        }),
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` }),
  };
  const pool = new pg.Pool({ ...connection, max: options.poolSize ?? 10 });
  const reads = new PipelinedReads(connection);
  // An idle client that loses its server emits 'error' on the pool; without a listener that
  // would crash the process. The next query gets a fresh connection.
  pool.on('error', () => {});
  // A client checked out of the pool (a transaction between two statements, a deferred write
  // after an answer) that loses its server emits 'error' on itself, not on the pool: without a
  // listener that crashes the process too. Its query fails as usual; the pool drops the client.
  pool.on('connect', (client) => client.on('error', () => {}));
  const changes = new PostgresChanges(reads);
  // A look at the change counters sent before a write of this process completed may miss it.
  const kysely = new Kysely<Database>({ dialect: watchWrites(new PostgresDialect({ pool }), () => changes.noteWrite()) });
  // Kysely ends the pool only if it ever ran a query through it: a connection closed before its
  // first query would otherwise stay usable (the next query opens the pool again).
  const close = async () => {
    await reads.close();
    await kysely.destroy();
    if (!pool.ended) await pool.end();
  };
  return { kysely, dialect: 'postgres', sqlite: null, commits: null, pool, reads, changes, sessionChanges: changes.sessions, tokenChanges: changes.tokens, dataOrTokenChanges: changes.dataOrTokens, close };
}

/** True when the database answers a trivial query. */
export async function ping(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db.kysely);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `fn` in a transaction that takes the write lock up front. On SQLite that is
 * `BEGIN IMMEDIATE`: a read-then-write transaction started with a plain BEGIN can be overtaken
 * by another writer between its read and its write. On PostgreSQL callers lock the rows they
 * read with `forUpdate()`.
 */
export async function writeTransaction<T>(db: Db, fn: (trx: Kysely<Database> | Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.dialect === 'postgres') return db.kysely.transaction().execute(fn);
  return db.kysely.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const result = await fn(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (error) {
      // SQLite ends the transaction itself on some failures (SQLITE_FULL, SQLITE_IOERR, …): a
      // ROLLBACK then fails with "no transaction is active" and would hide the error that
      // matters (a full disk answers 503, not 500).
      if (db.sqlite?.inTransaction !== false) await sql`rollback`.execute(conn);
      throw error;
    }
  });
}

/** Stands for a named argument where a statement() puts it: the value itself is given at each run. */
export type Arg<Args> = <Key extends keyof Args & string>(key: Key) => Args[Key];

/** A statement(): built once per database, run with named arguments. */
export type Statement<Args, Row> = {
  all(db: Db, args: Args): Promise<Row[]>;
  first(db: Db, args: Args): Promise<Row | undefined>;
};

/**
 * A read written with Kysely, built and prepared once per database, then run with named
 * arguments (`name` names it on PostgreSQL: one per SQL text). For the reads of pages shown at
 * every request, where building the statement (Kysely's immutable builders, each step a frozen
 * copy) cost as much as running it: /security's three reads took 27 µs to build. `build` places
 * each argument with `arg('key')` and must not look at it: the SQL is the same for every run.
 */
export function statement<Args extends Record<string, unknown>, Row>(
  name: string,
  build: (kysely: Kysely<Database>, arg: Arg<Args>) => { compile(): CompiledQuery<Row> },
  options: { pooled?: boolean } = {},
): Statement<Args, Row> {
  type Ready = { prepared: Prepared<Row>; parameters: (args: Args) => unknown[] };
  const built = new WeakMap<Db, Ready>();
  const ready = (db: Db): Ready => {
    let found = built.get(db);
    if (found !== undefined) return found;
    // Each argument is compiled as a unique object, then found again among the parameters.
    const places = new Map<unknown, keyof Args & string>();
    const arg = ((key: keyof Args & string) => {
      const place = Object.freeze({ argument: key });
      places.set(place, key);
      return place;
    }) as unknown as Arg<Args>;
    const query = build(db.kysely, arg).compile();
    const fixed = query.parameters;
    const keys = fixed.map((value) => places.get(value));
    found = { prepared: prepare<Row>(db, name, query, options), parameters: (args) => keys.map((key, at) => (key === undefined ? fixed[at] : args[key])) };
    built.set(db, found);
    return found;
  };
  return {
    all: (db, args) => {
      const { prepared, parameters } = ready(db);
      return prepared.all(parameters(args));
    },
    first: (db, args) => {
      const { prepared, parameters } = ready(db);
      return prepared.first(parameters(args));
    },
  };
}

/**
 * statement()s for a read whose SQL depends on a few choices of its input (the panel's tables:
 * which filters are set, the sort column and its direction): one statement per shape, built the
 * first time that shape is asked for. A shape's values come from allowlists and booleans, so a
 * family holds a few dozen statements at most; past `MAX_SHAPES` (a shape made of free input
 * would be a bug) a shape is built for the one run and not kept. `build` may look at the shape
 * only; the values go through `arg` as in statement(). `pooled`: shapes that may run long (a
 * search through every row) go to PostgreSQL's pool, not the pipelined connection, where they
 * would hold up every read behind them.
 */
export type StatementFamily<Shape, Args, Row> = {
  all(db: Db, shape: Shape, args: Args): Promise<Row[]>;
  first(db: Db, shape: Shape, args: Args): Promise<Row | undefined>;
};

const MAX_SHAPES = 256;

export function statementFamily<Shape extends Record<string, string | boolean>, Args extends Record<string, unknown>, Row>(
  name: string,
  build: (kysely: Kysely<Database>, arg: Arg<Args>, shape: Shape) => { compile(): CompiledQuery<Row> },
  options: { pooled?: (shape: Shape) => boolean } = {},
): StatementFamily<Shape, Args, Row> {
  const shapes = new Map<string, Statement<Args, Row>>();
  const of = (shape: Shape): Statement<Args, Row> => {
    let key = '';
    for (const part in shape) key += `${part}=${String(shape[part])};`;
    let found = shapes.get(key);
    if (found === undefined) {
      if (shapes.size >= MAX_SHAPES) return statement<Args, Row>('', (kysely, arg) => build(kysely, arg, shape), { pooled: true });
      // One name per SQL text on PostgreSQL (a prepared statement's name is at most 63 bytes).
      found = statement<Args, Row>(`${name}_${shapes.size}`, (kysely, arg) => build(kysely, arg, shape), { pooled: options.pooled?.(shape) === true });
      shapes.set(key, found);
    }
    return found;
  };
  return {
    all: (db, shape, args) => of(shape).all(db, args),
    first: (db, shape, args) => of(shape).first(db, args),
  };
}

/**
 * A compiled statement prepared once per driver, run with its parameters by position: what
 * statement() runs, and the rate limiter's upsert (raw SQL). Kysely compiles and better-sqlite3
 * re-prepares on every call otherwise.
 */
export type Prepared<Row> = {
  first(params: readonly unknown[]): Promise<Row | undefined>;
  all(params: readonly unknown[]): Promise<Row[]>;
};

export function prepare<Row>(db: Db, name: string, query: CompiledQuery, options: { pooled?: boolean } = {}): Prepared<Row> {
  const sqlite = db.sqlite;
  if (sqlite !== null) {
    // Prepared at first use, so a service can be built before the migrations have run.
    let statement: SQLite.Statement | null = null;
    const ready = () => (statement ??= sqlite.prepare(query.sql));
    return {
      first: async (params) => ready().get(...params) as Row | undefined,
      all: async (params) => ready().all(...params) as Row[],
    };
  }
  const pool = db.pool;
  const reads = db.reads;
  if (pool === null || reads === null) throw new Error('no driver');
  // A read goes on the pipelined connection; a write on the pool, and says so once it is
  // acknowledged, as the Kysely driver's do (perf/watched-writes.ts).
  const read = readsOnly(query);
  const pipelined = read && options.pooled !== true;
  const wrote = read || !(db.changes instanceof PostgresChanges) ? null : db.changes;
  const run = async (params: readonly unknown[]) => {
    // A named query is parsed and planned once per connection by PostgreSQL.
    const named = { name, text: query.sql, values: params as unknown[] };
    const result = pipelined ? await reads.query(named) : await pool.query(named);
    wrote?.noteWrite();
    return result.rows as Row[];
  };
  return {
    first: async (params) => (await run(params))[0],
    all: run,
  };
}
