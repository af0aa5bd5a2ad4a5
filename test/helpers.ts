// Test support: a fresh app on a fresh, migrated database for each test file (or test).
// SQLite in memory by default; with TEST_DATABASE_URL=postgres://… each app gets its own
// PostgreSQL schema, dropped when the app closes. Nothing of our own is mocked.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp, type BuildOptions } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { connect, type Db } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrator.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'sqlite::memory:';
export const onPostgres = TEST_DATABASE_URL.startsWith('postgres');
export const TEST_APP_KEY = `base64:${Buffer.alloc(32, 7).toString('base64')}`;

export type TestDatabase = {
  db: Db;
  url: string;
  /** Another connection to the same database, as a second instance of the service has. */
  connectAgain(): Db;
  drop(): Promise<void>;
};

/**
 * A new empty database: an in-memory SQLite (a file in a temporary directory with `file`, so
 * that other connections can open it), or a new schema on the test PostgreSQL. `sqlite` asks
 * for SQLite even when TEST_DATABASE_URL names a PostgreSQL.
 */
export async function createTestDatabase(options: { file?: boolean; sqlite?: boolean } = {}): Promise<TestDatabase> {
  if (!onPostgres || options.sqlite === true) {
    const dir = options.file === true ? mkdtempSync(join(tmpdir(), 'tessera-test-db-')) : null;
    const url = dir === null ? 'sqlite::memory:' : `sqlite:${join(dir, 'app.db')}`;
    const db = connect(url);
    await migrateToLatest(db);
    const others: Db[] = [];
    return {
      db,
      url,
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
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const db = connect(TEST_DATABASE_URL, { schema, poolSize: 5 });
  try {
    await migrateToLatest(db);
  } catch (error) {
    // A pool left open would keep the test process alive after the failure.
    await db.close();
    throw error;
  }
  const others: Db[] = [];
  return {
    db,
    url: TEST_DATABASE_URL,
    connectAgain: () => {
      const other = connect(TEST_DATABASE_URL, { schema, poolSize: 2 });
      others.push(other);
      return other;
    },
    drop: async () => {
      await Promise.all([db, ...others].map((each) => each.close()));
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
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
    ...env,
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
