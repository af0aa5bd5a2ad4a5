// Runs the CLI the way a user does. On SQLite (the default) each command is a real process,
// `node --import tsx src/cli.ts …` (or `node dist/cli.js …` after a build: test/support/entry.ts), on a temporary database file; with TEST_DATABASE_URL set to
// PostgreSQL, a schema cannot be named in DATABASE_URL, so run() is called in-process on a fresh
// schema instead. Either way the test reads the database through the same services as the app.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import pg from 'pg';
import { run } from '../../src/cli.js';
import type { Config } from '../../src/config.js';
import { connect, type Db } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createServices, type Services } from '../../src/services.js';
import { TEST_APP_KEY, TEST_DATABASE_URL, onPostgres, testConfig } from '../helpers.js';
import { COMPILE_CACHE, entry } from '../support/entry.js';

// The compiled CLI when it is newer than the sources (test/support/entry.ts).
const CLI = entry('cli');
/** The script the CLI processes run, and the node options it needs. */
export const CLI_PATH = CLI.path;
export const CLI_NODE_ARGS: readonly string[] = CLI.nodeArgs;

export type CliResult = { code: number; stdout: string; stderr: string };

/** Spawns the real CLI with exactly this environment (plus PATH) in `cwd`. */
export function spawnCli(args: readonly string[], options: { env?: Record<string, string>; cwd: string; stdin?: string }): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...CLI_NODE_ARGS, CLI_PATH, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...COMPILE_CACHE, NODE_ENV: 'test', APP_KEY: TEST_APP_KEY, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

function collector(): { stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { stream, text: () => text };
}

/** Calls run() in-process and collects what it writes. */
export async function runInProcess(
  args: readonly string[],
  context: { db?: Db; config?: Config; cwd?: string; stdin?: Readable; interactive?: boolean },
): Promise<CliResult> {
  const stdout = collector();
  const stderr = collector();
  const code = await run(args, {
    stdin: context.stdin ?? Readable.from([]),
    stdout: stdout.stream,
    stderr: stderr.stream,
    interactive: context.interactive ?? false,
    ...(context.db === undefined ? {} : { db: context.db }),
    ...(context.config === undefined ? {} : { config: context.config }),
    ...(context.cwd === undefined ? {} : { cwd: context.cwd }),
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

export type CliHarness = {
  db: Db;
  services: Services;
  dir: string;
  /** Runs one command line against this harness's database. */
  cli(args: readonly string[], env?: Record<string, string>): Promise<CliResult>;
  close(): Promise<void>;
};

/** A fresh database (migrated unless `migrated: false`) and a way to run the CLI on it. */
export async function createCliHarness(options: { migrated?: boolean } = {}): Promise<CliHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-cli-'));
  let db: Db;
  let dropSchema = async () => {};
  let url: string;
  if (onPostgres) {
    const schema = `cli_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    url = TEST_DATABASE_URL;
    db = connect(url, { schema, poolSize: 3 });
    dropSchema = async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    };
  } else {
    url = `sqlite:${join(dir, 'app.db')}`;
    db = connect(url);
  }
  if (options.migrated !== false) await migrateToLatest(db);
  const baseConfig = testConfig({ DATABASE_URL: url });
  let services: Services | undefined;
  return {
    db,
    // Built on first use: the token service prepares statements, which needs the tables.
    get services() {
      services ??= createServices(db, baseConfig);
      return services;
    },
    dir,
    cli: (args, env = {}) =>
      onPostgres
        ? runInProcess(args, { db, config: testConfig({ DATABASE_URL: url, ...env }), cwd: dir })
        : spawnCli(args, { cwd: dir, env: { DATABASE_URL: url, ...env } }),
    close: async () => {
      await db.close();
      await dropSchema();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
