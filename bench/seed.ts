// Bench data, written straight into a migrated SQLite file with better-sqlite3 in one
// transaction per table: 100,000 posts and tokens in seconds rather than minutes of service calls.
// For PostgreSQL the same rows are then copied into a new database (copyToPostgres).
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { hashPassword } from '../src/modules/passwords/hasher.js';
import { generateAppKey } from '../src/config.js';
import { generateSecret, hashSecret } from '../src/modules/tokens/token-string.js';

/**
 * The environment of a service under measurement (npm run bench, bench/profile.ts,
 * bench/instructions.ts): production settings on a database (a SQLite file's path, or a
 * postgres:// URL), one log line a request.
 */
export function serviceEnv(database: string, dataDir: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    APP_KEY: generateAppKey(),
    DATABASE_URL: database.startsWith('postgres') ? database : `sqlite:${database}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    // The rate limits would answer 429 long before the service is saturated: a benchmark
    // measures the service, the limits have tests of their own.
    API_RATE_LIMIT: '0',
    LOGIN_RATE_LIMIT: '0',
  };
}

export const BENCH_EMAIL = 'bench@example.com';
export const BENCH_PASSWORD = 'bench-password-1';
/** An administrator (the panel's pages), with the same password; the last user, so the others keep their ids. */
export const BENCH_ADMIN_EMAIL = 'admin@example.com';

export type BenchData = {
  /** A valid token of the bench user, chosen from the middle of the table. */
  token: string;
  posts: number;
  tokens: number;
};

const BODY = `## A heading\n\nSome **markdown** with a [link](https://example.com) and a list:\n\n- one\n- two\n- three\n\n${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(8)}\n`;

/** Creates a migrated database at `path` with `posts` posts and `tokens` tokens (spread over 1,000 users), and an administrator. */
export async function seedBenchDatabase(path: string, counts: { posts: number; tokens: number }): Promise<BenchData> {
  const db = connect(`sqlite:${path}`);
  await migrateToLatest(db);
  await db.close();

  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = OFF');
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  // One real argon2id hash (the login scenario verifies it); the other users share it.
  const password = await hashPassword(BENCH_PASSWORD);

  const userCount = 1_000;
  const insertUser = sqlite.prepare(
    'insert into users (name, email, password, email_verified_at, is_admin, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)',
  );
  sqlite.transaction(() => {
    insertUser.run('Bench User', BENCH_EMAIL, password, iso(now), 0, iso(now), iso(now));
    for (let i = 2; i <= userCount; i += 1) insertUser.run(`User ${i}`, `user${i}@example.com`, password, iso(now), 0, iso(now), iso(now));
    insertUser.run('Bench Admin', BENCH_ADMIN_EMAIL, password, iso(now), 1, iso(now), iso(now));
  })();

  const insertToken = sqlite.prepare(
    'insert into personal_access_tokens (id, user_id, name, token, abilities, last_used_at, expires_at, created_at, updated_at) values (?, ?, ?, ?, ?, null, null, ?, ?)',
  );
  const chosenId = Math.max(1, Math.floor(counts.tokens / 2));
  let token = '';
  sqlite.transaction(() => {
    for (let id = 1; id <= counts.tokens; id += 1) {
      const secret = generateSecret('');
      const userId = id === chosenId ? 1 : 1 + (id % userCount);
      if (id === chosenId) token = `${id}|${secret}`;
      insertToken.run(id, userId, `device-${id}`, hashSecret(secret), '["*"]', iso(now - id * 1000), iso(now - id * 1000));
    }
  })();

  const insertPost = sqlite.prepare(
    'insert into posts (author_id, title, slug, excerpt, body, locale, status, published_at, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  sqlite.transaction(() => {
    for (let i = 1; i <= counts.posts; i += 1) {
      // Mostly published English and French posts, some drafts and archived ones, newest last.
      const status = i % 10 === 0 ? 'draft' : i % 10 === 5 ? 'archived' : 'published';
      const published = status === 'draft' ? null : iso(now - (counts.posts - i) * 60_000);
      insertPost.run(1 + (i % userCount), `Post number ${i}`, `post-number-${i}`, `The excerpt of post ${i}.`, BODY, i % 3 === 0 ? 'fr' : 'en', status, published, iso(now), iso(now));
    }
  })();
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  // Statistics as SQLite's PRAGMA optimize would gather them: bounded, so sqlite_stat1 only. A
  // full ANALYZE adds sqlite_stat4 samples, with which SQLite re-plans at each run every statement
  // that binds a value an index with samples is searched by (docs/performance.md).
  sqlite.pragma('analysis_limit = 2000');
  sqlite.exec('analyze');
  sqlite.close();
  return { token, posts: counts.posts, tokens: counts.tokens };
}

/**
 * A new PostgreSQL database at `url` (dropped first if it exists), migrated, with the users,
 * tokens and posts of the SQLite file at `sqlitePath`, ids included.
 */
export async function copyToPostgres(sqlitePath: string, url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`BENCH_DATABASE_URL: a plain database name is needed, got "${name}"`);
  const server = new URL(url);
  server.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: server.toString() });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();

  const db = connect(url, { requestTimeouts: false });
  await migrateToLatest(db);
  const source = new SQLite(sqlitePath, { readonly: true });
  try {
    for (const table of ['users', 'personal_access_tokens', 'posts'] as const) {
      const rows = source.prepare(`select * from ${table} order by id`).all() as Record<string, unknown>[];
      for (let at = 0; at < rows.length; at += 2_000) {
        await db.kysely
          .insertInto(table)
          .values(rows.slice(at, at + 2_000) as never)
          .execute();
      }
      // The ids were copied: the next one the service makes follows them.
      await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(db.kysely);
    }
    // The copy leaves work that PostgreSQL would otherwise do during the measurements: the rows'
    // hint bits and visibility map (autovacuum after inserts), and the copy's dirty buffers (a
    // timed checkpoint spreading 90 MB of writes over the next minutes: seen in the server's
    // log across the SQLite rows and the first PostgreSQL rows). Both are done now.
    await sql`vacuum analyze`.execute(db.kysely);
    await sql`checkpoint`.execute(db.kysely);
  } finally {
    source.close();
    await db.close();
  }
}

/** Drops a database copyToPostgres made. */
export async function dropPostgres(url: string): Promise<void> {
  const server = new URL(url);
  const name = decodeURIComponent(server.pathname.slice(1));
  server.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: server.toString() });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
