// Test support: a fresh app on a fresh, migrated database for each test file (or test).
// SQLite in memory by default; with TEST_DATABASE_URL=postgres://… each app gets its own
// PostgreSQL schema, dropped when the app closes. Nothing of our own is mocked.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Migrator } from 'kysely';
import pg from 'pg';
import { buildApp, type BuildOptions } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { connect, type Db } from '../src/db/connect.js';
import { migrateToLatest, retryingCatalogRace } from '../src/db/migrator.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'sqlite::memory:';
export const onPostgres = TEST_DATABASE_URL.startsWith('postgres');
export const TEST_APP_KEY = `base64:${Buffer.alloc(32, 7).toString('base64')}`;

export type TestDatabase = {
  db: Db;
  url: string;
  /** Another connection to the same database, as a second instance of the service has. */
  connectAgain(): Db;
  drop(): Promise<void>;
  /** How it was made: migrated, copied from the template, or (PostgreSQL) a kept schema refilled. */
  origin: 'migrator' | 'template' | 'kept';
};

// The migrated schema is made once and copied, not migrated again for every app: a test app
// on PostgreSQL spent about 190 ms creating and migrating its schema (13 migrations, each a run
// of DDL round trips) and 60 ms dropping it, on SQLite about 20 ms. The copy is exact by
// construction, and test/unit/test-database.test.ts compares it with a freshly migrated one.
// On SQLite: one migrated in-memory database per test process, serialized, each app opened from
// that image. On PostgreSQL: the DDL and rows pg_dump gives of a schema migrated once per set of
// migrations (kept in the temporary directory, shared by every test process of a run), replayed
// in one round trip into each new schema. Without pg_dump (or with one older than the server)
// each schema is migrated as before.

/** Every file of the migrations and the migrator, hashed: a changed migration makes a new template. */
const migrationsHash = (() => {
  let memo: string | null = null;
  return (): string => {
    if (memo !== null) return memo;
    const hash = createHash('sha256');
    const dir = fileURLToPath(new URL('../src/db/migrations/', import.meta.url));
    for (const name of readdirSync(dir).sort()) hash.update(name).update(readFileSync(join(dir, name)));
    hash.update(readFileSync(fileURLToPath(new URL('../src/db/migrator.ts', import.meta.url))));
    memo = hash.digest('hex').slice(0, 12);
    return memo;
  };
})();

let sqliteTemplate: Promise<Buffer> | null = null;

/** A migrated SQLite database's image, made once per test process. */
function sqliteImage(): Promise<Buffer> {
  sqliteTemplate ??= (async () => {
    const template = connect('sqlite::memory:');
    try {
      await migrateToLatest(template);
      return template.sqlite!.serialize();
    } finally {
      await template.close();
    }
  })();
  return sqliteTemplate;
}

/** The placeholder for the schema's name in the PostgreSQL template script. */
const SCHEMA_PLACEHOLDER = '__tessera_test_schema__';
/** Where the template script's rows begin (after its DDL). */
const ROWS_MARKER = '/* tessera: the rows of a migrated schema */';
type PgTemplate = { structure: string; rows: string };
let pgTemplate: Promise<PgTemplate | null> | null = null;
let pgAdmin: pg.Pool | null = null;

/** One connection for creating and dropping schemas, which never keeps a finished test process alive. */
function admin(): pg.Pool {
  pgAdmin ??= new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, allowExitOnIdle: true });
  return pgAdmin;
}

/**
 * The script that makes a migrated schema (its tables, indexes, functions, triggers and the rows
 * the migrations write), with SCHEMA_PLACEHOLDER for its name; null when pg_dump cannot make it.
 */
function pgTemplateScript(): Promise<PgTemplate | null> {
  const split = (script: string): PgTemplate => {
    const [structure = '', rows = ''] = script.split(ROWS_MARKER);
    return { structure, rows };
  };
  pgTemplate ??= (async () => {
    const cached = join(tmpdir(), `tessera-test-schema-${migrationsHash()}.v2.sql`);
    if (existsSync(cached)) return split(readFileSync(cached, 'utf8'));
    // Several test processes may start at once: each makes its own (a few hundred ms, once a run).
    const name = `tessera_template_${randomBytes(6).toString('hex')}`;
    await admin().query(`create schema ${name}`);
    try {
      const db = connect(TEST_DATABASE_URL, { schema: name, poolSize: 1 });
      try {
        await migrateToLatest(db);
      } finally {
        await db.close();
      }
      const dumped = await new Promise<string>((resolve, reject) =>
        execFile('pg_dump', ['--dbname', TEST_DATABASE_URL, '--schema', name, '--schema-only', '--no-owner', '--no-privileges'], { maxBuffer: 16 << 20 }, (error, stdout) =>
          error === null ? resolve(stdout) : reject(error),
        ),
      );
      const rows = await new Promise<string>((resolve, reject) =>
        execFile('pg_dump', ['--dbname', TEST_DATABASE_URL, '--schema', name, '--data-only', '--inserts', '--no-owner', '--no-privileges'], { maxBuffer: 16 << 20 }, (error, stdout) =>
          error === null ? resolve(stdout) : reject(error),
        ),
      );
      // psql's own commands (`\restrict` in recent versions) and the schema's creation are left out;
      // the SET lines concern only the connection that replays the script.
      const script = [dumped, ROWS_MARKER, rows]
        .join('\n')
        .split('\n')
        .filter((line) => !line.startsWith('\\') && !line.startsWith('--') && !/^CREATE SCHEMA /.test(line))
        .join('\n')
        .replaceAll(name, SCHEMA_PLACEHOLDER);
      const partial = `${cached}.${process.pid}`;
      writeFileSync(partial, script);
      renameSync(partial, cached);
      return split(script);
    } catch {
      return null;
    } finally {
      await admin().query(`drop schema if exists ${name} cascade`);
    }
  })();
  return pgTemplate;
}

// Making a schema from the template and dropping it cost PostgreSQL a quarter to half a second
// of CPU per test app (DDL on a catalog that grows with every schema of the run: most of the
// PostgreSQL run's time); emptying a schema and writing the template's rows into it again costs
// about 2 ms. So a schema made from the template is kept when its app is done, if its structure
// is still what it was made with, and the process's next app gets it emptied and refilled
// (test/unit/test-database.test.ts compares such a schema with a freshly migrated one). The
// name carries the process id: what a process still keeps at its end is dropped then, or, if
// it could not be, by the first app of a later process once that process has ended.
const kept: string[] = [];
/** Each kept-able schema's structure, as it was made. */
const structures = new Map<string, string>();
let tables: Promise<string[]> | null = null;

/** The structure of a schema (tables, columns, indexes, constraints, triggers, functions), as one digest. */
async function structureOf(schema: string): Promise<string> {
  const result = await admin().query<{ digest: string }>(
    `select md5(coalesce(string_agg(item, E'\\n' order by item), '')) as digest from (
       select 'rel ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(pg_get_indexdef(c.oid), '') from pg_class c where c.relnamespace = $1::regnamespace
       union all select 'col ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
         from pg_attribute a join pg_class c on c.oid = a.attrelid left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
         where c.relnamespace = $1::regnamespace and a.attnum > 0 and not a.attisdropped
       union all select 'con ' || conname || ' ' || pg_get_constraintdef(oid) from pg_constraint where connamespace = $1::regnamespace
       union all select 'trg ' || t.tgname || ' ' || t.tgenabled::text || ' ' || pg_get_triggerdef(t.oid) from pg_trigger t join pg_class c on c.oid = t.tgrelid where c.relnamespace = $1::regnamespace and not t.tgisinternal
       union all select 'fn ' || p.proname || ' ' || md5(p.prosrc) from pg_proc p where p.pronamespace = $1::regnamespace
     ) items(item)`,
    [schema],
  );
  return result.rows[0]?.digest ?? '';
}

/** Drops the schemas an ended process kept (it could not drop them itself: killed, or exited at once). */
let swept: Promise<void> | null = null;
function sweepOrphans(): Promise<void> {
  swept ??= (async () => {
    const result = await admin().query<{ name: string }>(`select nspname as name from pg_namespace where nspname ~ '^t_[0-9]+_'`);
    for (const { name } of result.rows) {
      const pid = Number(/^t_(\d+)_/.exec(name)?.[1]);
      if (pid === process.pid || existsSync(`/proc/${pid}`)) continue;
      await admin().query(`drop schema if exists ${name} cascade`).catch(() => undefined);
    }
  })();
  return swept;
}

let dropAtExit = false;
/** The schemas this process still keeps are dropped when its work is done. */
function dropKeptAtExit(): void {
  if (dropAtExit) return;
  dropAtExit = true;
  process.on('beforeExit', () => {
    const names = kept.splice(0);
    if (names.length > 0) void admin().query(`drop schema if exists ${names.join(', ')} cascade`).catch(() => undefined);
  });
}

/** A kept schema, emptied and refilled with the template's rows; null when none is kept or it could not be. */
async function reuseKeptSchema(): Promise<string | null> {
  const template = await pgTemplateScript();
  const schema = kept.pop();
  if (schema === undefined || template === null) return null;
  try {
    tables ??= admin()
      .query<{ name: string }>(`select tablename as name from pg_tables where schemaname = $1 order by tablename`, [schema])
      .then((result) => result.rows.map((row) => row.name));
    const names = await tables;
    // Triggers (and the foreign keys' own) do not run as a replica: the rows go back exactly as
    // the template has them, counters included, whatever order the tables are emptied in.
    await admin().query(
      `begin; set local session_replication_role = replica;\n${names.map((name) => `delete from ${schema}."${name}";`).join('\n')}\n${template.rows.replaceAll(SCHEMA_PLACEHOLDER, schema)}\ncommit;`,
    );
    return schema;
  } catch {
    await admin().query('rollback').catch(() => undefined);
    structures.delete(schema);
    await admin().query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    return null;
  }
}

/** Keeps a schema made from the template for the next app, or drops it when its structure changed. */
async function releasePgSchema(schema: string): Promise<void> {
  const made = structures.get(schema);
  if (made !== undefined && (await structureOf(schema).catch(() => null)) === made) {
    kept.push(schema);
    dropKeptAtExit();
    return;
  }
  structures.delete(schema);
  await admin().query(`drop schema ${schema} cascade`);
}

/** Creates `schema` migrated: from the template when there is one, else by the migrator. */
async function createPgSchema(schema: string): Promise<{ db: Db; origin: 'template' | 'migrator' }> {
  const script = await pgTemplateScript();
  if (script !== null) {
    try {
      // The rows go in as a replica, so no trigger runs: they are the migrated schema's exactly
      // (the triggers would also find nothing, pg_dump's script empties the search_path).
      await admin().query(
        `begin;\ncreate schema ${schema};\n${script.structure.replaceAll(SCHEMA_PLACEHOLDER, schema)}\nset local session_replication_role = replica;\n${script.rows.replaceAll(SCHEMA_PLACEHOLDER, schema)}\ncommit;`,
      );
      structures.set(schema, await structureOf(schema));
      return { db: connect(TEST_DATABASE_URL, { schema, poolSize: 5 }), origin: 'template' };
    } catch {
      await admin().query('rollback').catch(() => undefined);
      structures.delete(schema);
      await admin().query(`drop schema if exists ${schema} cascade`);
    }
  }
  await admin().query(`create schema ${schema}`);
  const db = connect(TEST_DATABASE_URL, { schema, poolSize: 5 });
  try {
    await migrateToLatest(db);
  } catch (error) {
    // A pool left open would keep the test process alive after the failure.
    await db.close();
    throw error;
  }
  return { db, origin: 'migrator' };
}

/**
 * A new migrated database: an in-memory SQLite (a file in a temporary directory with `file`, so
 * that other connections can open it), or a new schema on the test PostgreSQL. `sqlite` asks
 * for SQLite even when TEST_DATABASE_URL names a PostgreSQL. `migrated: 'migrator'` runs the
 * migrator itself instead of copying the template (the test of the template compares the two).
 */
export async function createTestDatabase(options: { file?: boolean; sqlite?: boolean; migrated?: 'copy' | 'migrator' } = {}): Promise<TestDatabase> {
  const copy = options.migrated !== 'migrator';
  if (!onPostgres || options.sqlite === true) {
    const dir = options.file === true ? mkdtempSync(join(tmpdir(), 'tessera-test-db-')) : null;
    const url = dir === null ? 'sqlite::memory:' : `sqlite:${join(dir, 'app.db')}`;
    const image = copy ? await sqliteImage() : undefined;
    if (dir !== null && image !== undefined) writeFileSync(join(dir, 'app.db'), image);
    const db = connect(url, dir === null && image !== undefined ? { sqliteImage: image } : {});
    if (!copy) await migrateToLatest(db);
    const others: Db[] = [];
    return {
      db,
      url,
      origin: copy ? 'template' : 'migrator',
      connectAgain: () => {
        if (dir === null) throw new Error('an in-memory database has one connection: ask for { file: true }');
        const other = connect(url);
        others.push(other);
        return other;
      },
      drop: async () => {
        await Promise.all([db, ...others].map((each) => each.close()));
        if (dir !== null) rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  let schema = `t_${process.pid}_${randomBytes(6).toString('hex')}`;
  let db: Db;
  let origin: TestDatabase['origin'] = 'migrator';
  if (copy) {
    await sweepOrphans();
    const reused = await reuseKeptSchema();
    if (reused !== null) {
      schema = reused;
      db = connect(TEST_DATABASE_URL, { schema, poolSize: 5 });
      origin = 'kept';
    } else ({ db, origin } = await createPgSchema(schema));
  } else {
    await admin().query(`create schema ${schema}`);
    db = connect(TEST_DATABASE_URL, { schema, poolSize: 5 });
    await migrateToLatest(db).catch(async (error: unknown) => {
      await db.close();
      throw error;
    });
  }
  const others: Db[] = [];
  return {
    db,
    url: TEST_DATABASE_URL,
    origin,
    connectAgain: () => {
      const other = connect(TEST_DATABASE_URL, { schema, poolSize: 2 });
      others.push(other);
      return other;
    },
    drop: async () => {
      await Promise.all([db, ...others].map((each) => each.close()));
      await releasePgSchema(schema);
    },
  };
}

let dataDir: string | null = null;

/**
 * This test process's DATA_DIR: a temporary directory, removed when the process exits. The apps,
 * servers and CLI processes the tests start use it unless told otherwise, so that the
 * developer's own ./data (the mails /_dev/mail lists, app.key, the database) never holds a
 * test's leftovers; scripts/run-tests.mjs fails the run if ./data changed.
 */
export function testDataDir(): string {
  if (dataDir === null) {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-test-data-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    dataDir = dir;
  }
  return dataDir;
}

/** The test configuration: quiet, no rate limits, a fixed key, a temporary DATA_DIR; `env` overrides any variable. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: testDataDir(),
    APP_KEY: TEST_APP_KEY,
    APP_URL: 'http://localhost:3000',
    DATABASE_URL: TEST_DATABASE_URL,
    LOG_LEVEL: 'silent',
    API_RATE_LIMIT: '0',
    LOGIN_RATE_LIMIT: '0',
    // Passwords hash cheaply in test apps (as Laravel's phpunit.xml sets BCRYPT_ROUNDS=4): the
    // argon2id work of OWASP's cost was a fifth of the suite's CPU. A test that needs the real
    // cost (the timing of unknown and known addresses) passes ARGON_MEMORY and ARGON_TIME; an app
    // built as production or development has the real cost (config.ts accepts no less there).
    ...(env.NODE_ENV === undefined || env.NODE_ENV === 'test' ? TEST_ARGON_COST : {}),
    ...env,
  });
}

/** The argon2id cost of test apps (config.ts allows it with NODE_ENV=test only). */
export const TEST_ARGON_COST = { ARGON_MEMORY: '64', ARGON_TIME: '1' } as const;
/** OWASP's cost, the default of every other environment. */
export const OWASP_ARGON_COST = { ARGON_MEMORY: '19456', ARGON_TIME: '2' } as const;

/**
 * Moves a migration test's database to the named migration, throwing what failed. Kysely lists
 * every table of the database first: a schema another test process drops at that moment fails the
 * listing before anything is applied, so it is tried again, as migrateToLatest does.
 */
export async function migrateTo(migrator: Migrator, name: string): Promise<void> {
  await retryingCatalogRace(async () => {
    const result = await migrator.migrateTo(name);
    if (result.error !== undefined) throw result.error;
  });
}

export type TestApp = { app: FastifyInstance; db: Db; config: Config; close(): Promise<void> };

/** A built (not listening) app on a fresh database. Call close() when done. */
export async function buildTestApp(env: Record<string, string> = {}, options: Omit<BuildOptions, 'db'> = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = testConfig(env);
  const app = await buildApp(config, { ...options, db: database.db });
  await app.ready();
  return {
    app,
    db: database.db,
    config,
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

/** Two apps on one database, as two instances of the service have (SQLite in a file). Call close() when done. */
export async function twoInstances(env: Record<string, string> = {}): Promise<{ a: FastifyInstance; b: FastifyInstance; close(): Promise<void> }> {
  const database = await createTestDatabase({ file: true });
  const a = await buildApp(testConfig(env), { db: database.db });
  const b = await buildApp(testConfig(env), { db: database.connectAgain() });
  return {
    a,
    b,
    close: async () => {
      await a.close();
      await b.close();
      await database.drop();
    },
  };
}

let counter = 0;

/** Creates a user through the service (argon2id hash) and returns it with its password. */
export async function createUser(app: FastifyInstance, fields: { name?: string; email?: string; password?: string; verified?: boolean; admin?: boolean } = {}) {
  counter += 1;
  const password = fields.password ?? 'correct horse battery';
  const user = await app.services.users.create({
    name: fields.name ?? `User ${counter}`,
    email: fields.email ?? `user${counter}-${randomBytes(3).toString('hex')}@example.com`,
    password,
    verified: fields.verified ?? true,
    admin: fields.admin ?? false,
  });
  return { ...user, plainPassword: password };
}

/** Issues a token through the API and returns its plaintext. */
export async function issueToken(app: FastifyInstance, email: string, password: string, device = 'test-device'): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password, device_name: device } });
  if (response.statusCode !== 200) throw new Error(`token issue failed: ${response.statusCode} ${response.body}`);
  return (response.json() as { token: string }).token;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}`, accept: 'application/json' });

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
