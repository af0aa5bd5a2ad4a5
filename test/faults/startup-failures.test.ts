// The service cannot start: its port is taken, PostgreSQL is not there, the database does not
// exist or cannot be created, Redis does not answer though it holds the rate limits, a migration
// fails. Each case is the real process (test/support/entry.ts), which must print
// exactly one line naming the cause and the setting to change, exit 1, and show no stack unless
// LOG_LEVEL=debug; never a password. The CLI says the same for the database.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { TEST_APP_KEY, TEST_DATABASE_URL, onPostgres, testDataDir } from '../helpers.js';
import { withSearchPath, ROOT } from '../load/server-process.js';
import { freePort } from '../support/browser.js';
import { needsPostgres } from '../support/services.js';
import { spawnCli } from '../cli/harness.js';
import { COMPILE_CACHE, entry } from '../support/entry.js';

/** The compiled server when it is newer than the sources (test/support/entry.ts). */
const SERVER = entry('server');

type Outcome = { code: number | string; output: string; lines: string[] };

const STACK_LINE = /^\s+at /m;

/** Runs the server with `env` until it exits (killed after 60 s: a start that hangs fails; a slow machine under the suite's load took up to 20 s to fail one). */
function startServer(env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SERVER.nodeArgs, SERVER.path], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...COMPILE_CACHE, NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, HOST: '127.0.0.1', LOG_LEVEL: 'info', DATA_DIR: testDataDir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? 'unknown', output, lines: output.split('\n').filter((line) => line.trim() !== '') });
    });
  });
}

/** A port nothing listens on (chosen free; closed again). */
const closedPort = freePort;

/** A TCP server holding a port, as another process would. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { port: typeof address === 'object' && address !== null ? address.port : 0, server };
}

function assertOneLine(outcome: Outcome, line: string): void {
  assert.deepEqual(outcome.lines, [line], outcome.output);
  assert.equal(outcome.code, 1);
  assert.doesNotMatch(outcome.output, STACK_LINE);
}

const postgresBase = onPostgres ? TEST_DATABASE_URL : null;

describe('failures at start, as real processes', { concurrency: 3 }, () => {
  let dir: string;
  let held: { port: number; server: Server };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-start-'));
    held = await occupy();
  });
  after(() => {
    held?.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sqlite = (name: string) => `sqlite:${join(dir, `${name}.db`)}`;

  it('names the port in use and PORT, with no stack', async () => {
    const outcome = await startServer({ PORT: String(held.port), DATABASE_URL: sqlite('port') });
    assertOneLine(outcome, `PORT ${held.port} is already in use: stop the other process or set PORT.`);
  });

  it('prints the stack after the line at LOG_LEVEL=debug', async () => {
    const outcome = await startServer({ PORT: String(held.port), DATABASE_URL: sqlite('port-debug'), LOG_LEVEL: 'debug' });
    assert.equal(outcome.code, 1);
    assert.equal(outcome.lines[0], `PORT ${held.port} is already in use: stop the other process or set PORT.`);
    assert.match(outcome.output, STACK_LINE);
    assert.match(outcome.output, /EADDRINUSE/);
  });

  it('names the PostgreSQL address that refuses connections and DATABASE_URL, never the password', async () => {
    const port = await closedPort();
    for (const level of ['info', 'debug']) {
      const outcome = await startServer({ PORT: '0', DATABASE_URL: `postgres://tessera:hunter2-secret@127.0.0.1:${port}/tessera`, LOG_LEVEL: level });
      assert.equal(outcome.lines[0], `DATABASE_URL: cannot connect to 127.0.0.1:${port} (connection refused).`, outcome.output);
      assert.equal(outcome.code, 1);
      assert.doesNotMatch(outcome.output, /hunter2/);
      if (level === 'info') assertOneLine(outcome, `DATABASE_URL: cannot connect to 127.0.0.1:${port} (connection refused).`);
      else assert.match(outcome.output, /ECONNREFUSED/);
    }
  });

  it('names a PostgreSQL database that does not exist', { skip: needsPostgres }, async () => {
    const url = new URL(postgresBase!);
    const name = `tessera_missing_${randomBytes(4).toString('hex')}`;
    url.pathname = `/${name}`;
    const outcome = await startServer({ PORT: '0', DATABASE_URL: url.toString() });
    assertOneLine(outcome, `DATABASE_URL: the database "${name}" does not exist on ${url.hostname}:${url.port || 5432}: create it or set DATABASE_URL.`);
  });

  it('names a SQLite database whose directory cannot be created', async () => {
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a directory');
    const outcome = await startServer({ PORT: '0', DATABASE_URL: `sqlite:${blocker}/app.db` });
    assertOneLine(outcome, `DATABASE_URL: cannot create the SQLite database ${blocker}/app.db (${blocker} is not a directory).`);
  });

  it('names a SQLite file that is not a database', async () => {
    const path = join(dir, 'not-sqlite.db');
    writeFileSync(path, 'this is a text file, not a SQLite database, long enough to have a header');
    const outcome = await startServer({ PORT: '0', DATABASE_URL: `sqlite:${path}` });
    assertOneLine(outcome, `DATABASE_URL: cannot open the SQLite database ${path} (file is not a database).`);
  });

  it('names Redis that does not answer when RATE_LIMIT_STORE=redis, within a few seconds, never its password', async () => {
    const port = await closedPort();
    const outcome = await startServer({ PORT: '0', DATABASE_URL: sqlite('redis'), RATE_LIMIT_STORE: 'redis', REDIS_URL: `redis://:hunter2-secret@127.0.0.1:${port}` });
    assertOneLine(outcome, `REDIS_URL: cannot connect to 127.0.0.1:${port} (connection refused), and RATE_LIMIT_STORE=redis needs it.`);
    assert.doesNotMatch(outcome.output, /hunter2/);
  });

  it('names the migration that fails on SQLite, and what it met', async () => {
    // Another application's database: a users table that is not ours.
    const path = join(dir, 'foreign.db');
    const foreign = new SQLite(path);
    foreign.exec('create table users (id integer primary key, login text)');
    foreign.close();
    const outcome = await startServer({ PORT: '0', DATABASE_URL: `sqlite:${path}` });
    assertOneLine(outcome, 'DATABASE_URL: migration 2026_11_21_000001_create_core_tables failed: table "users" already exists.');
  });

  it('names the migration that fails on PostgreSQL, and what it met', { skip: needsPostgres }, async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: postgresBase! });
    await admin.connect();
    try {
      await admin.query(`create schema ${schema}`);
      await admin.query(`create table ${schema}.users (id serial primary key, login text)`);
      const outcome = await startServer({ PORT: '0', DATABASE_URL: withSearchPath(postgresBase!, schema) });
      assertOneLine(outcome, 'DATABASE_URL: migration 2026_11_21_000001_create_core_tables failed: relation "users" already exists.');
    } finally {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
  });

  it('the CLI names an unreachable PostgreSQL the same way', async () => {
    const port = await closedPort();
    const result = await spawnCli(['db:migrate'], { cwd: dir, env: { DATABASE_URL: `postgres://tessera:hunter2-secret@127.0.0.1:${port}/tessera` } });
    assert.equal(result.code, 1);
    assert.equal(result.stderr, `DATABASE_URL: cannot connect to 127.0.0.1:${port} (connection refused).\n`);
  });

  it('the CLI names a SQLite database whose directory cannot be created', async () => {
    const blocker = join(dir, 'cli-file');
    writeFileSync(blocker, 'not a directory');
    const result = await spawnCli(['db:migrate'], { cwd: dir, env: { DATABASE_URL: `sqlite:${blocker}/app.db` } });
    assert.equal(result.code, 1);
    assert.equal(result.stderr, `DATABASE_URL: cannot create the SQLite database ${blocker}/app.db (${blocker} is not a directory).\n`);
  });
});
