// Support for the load and fault suites: the real service as a child process (dist/server.js, or
// src/server.ts through tsx: test/support/entry.ts) on a free loopback port and its own database (a SQLite file in a temporary
// directory, or a fresh PostgreSQL schema), users seeded straight into that database, and an
// autocannon run that reports plain figures.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { connect, type Db } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { hashPassword } from '../../src/modules/passwords/hasher.js';
import { TEST_APP_KEY, TEST_DATABASE_URL, onPostgres, testDataDir } from '../helpers.js';
import { freePort } from '../support/browser.js';
import { COMPILE_CACHE, entry } from '../support/entry.js';

export const ROOT = new URL('../../', import.meta.url).pathname;

/** A database the child process and the test both open: a SQLite file or a PostgreSQL schema. */
export type SharedDatabase = {
  /** DATABASE_URL for the child process. */
  url: string;
  /** The test's own connection (migrated). */
  db: Db;
  dataDir: string;
  drop(): Promise<void>;
};

/** PostgreSQL URL whose connections use `schema` first (libpq's `options` parameter). */
export function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

/** `migrated: false` leaves the database empty, for the service to migrate it at its start. */
export async function createSharedDatabase(kind: 'sqlite' | 'postgres' = onPostgres ? 'postgres' : 'sqlite', options: { migrated?: boolean } = {}): Promise<SharedDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-'));
  if (kind === 'sqlite') {
    const url = `sqlite:${join(dataDir, 'app.db')}`;
    const db = connect(url);
    if (options.migrated !== false) await migrateToLatest(db);
    return {
      url,
      db,
      dataDir,
      drop: async () => {
        await db.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const base = onPostgres ? TEST_DATABASE_URL : 'postgres://postgres@127.0.0.1:5432/tessera_test';
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const db = connect(base, { schema, poolSize: 5 });
  if (options.migrated !== false) await migrateToLatest(db);
  return {
    url: withSearchPath(base, schema),
    db,
    dataDir,
    drop: async () => {
      await db.close();
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type SeededUser = { id: number; email: string; password: string };

/**
 * Inserts `count` verified users sharing one argon2id hash (one hash instead of `count`: seeding
 * is not what is measured). Emails are `load<n>-<tag>@example.com`.
 */
export async function seedUsers(db: Db, count: number, password = 'load-test-password'): Promise<SeededUser[]> {
  const hash = await hashPassword(password);
  const tag = randomBytes(3).toString('hex');
  const now = new Date().toISOString();
  const users: SeededUser[] = [];
  for (let start = 0; start < count; start += 200) {
    const rows = Array.from({ length: Math.min(200, count - start) }, (_, i) => ({
      name: `Load ${start + i}`,
      email: `load${start + i}-${tag}@example.com`,
      password: hash,
      email_verified_at: now,
      is_admin: 0,
      remember_token: null,
      locale: null,
      created_at: now,
      updated_at: now,
    }));
    const inserted = await db.kysely.insertInto('users').values(rows).returning(['id', 'email']).execute();
    users.push(...inserted.map((row) => ({ id: row.id, email: row.email, password })));
  }
  return users;
}

export type ServerProcess = {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<number | string>;
};

const REPORT_LISTENING = new URL('../support/report-listening.mjs', import.meta.url).href;
/** The compiled server when it is newer than the sources (test/support/entry.ts). */
const SERVER = entry('server');

/**
 * Starts the service (`node --import tsx src/server.ts`, or dist/server.js after a build: test/support/entry.ts) with `env` on a free port; resolves once GET /up answers.
 * The port is free when chosen but may be taken before the child listens: the child then exits
 * saying the port is in use and another port is tried. Only the child's own report that it
 * listens on the port (test/support/report-listening.mjs) counts, never an answer from whoever
 * else holds it.
 */
export async function startServerProcess(env: Record<string, string>, options: { port?: number; waitMs?: number } = {}): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      // 60 s: a start loads every module through tsx, which took 10–20 s on a slow 2-core machine
      // while the rest of the suite ran (three at a time for two workers and their primary).
      return await startOnce(env, options.port ?? (await freePort()), options.waitMs ?? 60_000);
    } catch (error) {
      if (!(error instanceof PortTaken) || options.port !== undefined || attempt >= 5) throw error;
    }
  }
}

class PortTaken extends Error {}

async function answersUp(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/up`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * Spawns the service on `port` with the tests' defaults and `env`, without waiting for it. Its
 * working directory is the repository, so DATA_DIR and DATABASE_URL default to the test
 * process's temporary directory rather than to the developer's ./data.
 */
export function spawnServer(env: Record<string, string>, port: number): ChildProcess {
  const url = `http://127.0.0.1:${port}`;
  return spawn(process.execPath, [...SERVER.nodeArgs, '--import', REPORT_LISTENING, SERVER.path], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      ...COMPILE_CACHE,
      NODE_ENV: 'test',
      APP_KEY: TEST_APP_KEY,
      HOST: '127.0.0.1',
      PORT: String(port),
      APP_URL: url,
      LOG_LEVEL: 'warn',
      API_RATE_LIMIT: '0',
      LOGIN_RATE_LIMIT: '0',
      DATA_DIR: testDataDir(),
      DATABASE_URL: `sqlite:${join(testDataDir(), 'app.db')}`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
}

async function startOnce(env: Record<string, string>, port: number, waitMs: number): Promise<ServerProcess> {
  const url = `http://127.0.0.1:${port}`;
  const child = spawnServer(env, port);
  let listening = false;
  child.on('message', (message: { type?: string; address?: { port?: number } | null }) => {
    if (message.type === 'listening' && message.address?.port === port) listening = true;
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  let done = false;
  void exited.then(() => (done = true));

  const deadline = Date.now() + waitMs;
  for (;;) {
    if (done) throw /EADDRINUSE|is already in use/.test(output) ? new PortTaken(`port ${port} taken: ${output}`) : new Error(`server exited before answering: ${output}`);
    if (listening && (await answersUp(url))) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  return {
    url,
    port,
    child,
    output: () => output,
    exited,
    stop: async (graceMs = 10_000) => {
      if (done) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** The messages of the warning lines (pino's level 40) in a process's output. */
export function warningsIn(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level?: number; msg?: string })
    .filter((line) => line.level === 40)
    .map((line) => line.msg ?? '');
}

/** Issues a token over HTTP; throws unless 200. */
export async function issueTokenHttp(url: string, email: string, password: string, device = 'load'): Promise<string> {
  const response = await fetch(`${url}/api/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ email, password, device_name: device }),
  });
  const body = (await response.json()) as { token?: string };
  if (response.status !== 200 || body.token === undefined) throw new Error(`token issue failed: ${response.status}`);
  return body.token;
}

export type Figures = {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
};

/** A plain autocannon run; resolves with its figures. */
export async function cannon(options: autocannon.Options): Promise<Figures> {
  const result = await autocannon(options);
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodeStats: result.statusCodeStats ?? {},
  };
}
