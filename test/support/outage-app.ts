// The app on a database that really fails, for the fault tests of issue 25 (§2–§4, §6): a SQLite
// file on a tmpfs of the test's own that the test fills (support/tmpfs.ts), or PostgreSQL through
// a TCP proxy the test cuts (faults/tcp-proxy.ts; the shared server is never touched). The app is
// built in the test's process (app.inject), with its log lines kept for the test to read.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { connect, type Db } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { TEST_DATABASE_URL, testConfig } from '../helpers.js';
import { TcpProxy } from '../faults/tcp-proxy.js';
import { mountTmpfs, type Tmpfs } from './tmpfs.js';

export type LogLine = { level: number; msg: string; err?: { stack?: string; code?: string }; [field: string]: unknown };

export type OutageApp = {
  app: FastifyInstance;
  db: Db;
  /** The log lines written so far, parsed. */
  log(): LogLine[];
  close(): Promise<void>;
};

function keptLog(): { stream: { write(line: string): void }; lines(): LogLine[] } {
  const written: string[] = [];
  return { stream: { write: (line) => void written.push(line) }, lines: () => written.flatMap((text) => text.split('\n')).filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine) };
}

async function appOn(db: Db, url: string, env: Record<string, string>): Promise<{ app: FastifyInstance; log: () => LogLine[]; dataDir: string }> {
  // Mails and keys in a directory of the test's own, never the developer's ./data.
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-outage-data-'));
  const log = keptLog();
  const app = await buildApp(testConfig({ DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env }), { db, loggerStream: log.stream });
  await app.ready();
  return { app, log: log.lines, dataDir };
}

export type FullDiskApp = OutageApp & { disk: Tmpfs; url: string };

/** The app on a SQLite file on a small tmpfs of its own (migrated, not yet full). */
export async function appOnSmallDisk(env: Record<string, string> = {}, megabytes = 4): Promise<FullDiskApp> {
  const disk = mountTmpfs(megabytes);
  const url = `sqlite:${join(disk.dir, 'app.db')}`;
  const db = connect(url);
  await migrateToLatest(db);
  const { app, log, dataDir } = await appOn(db, url, env);
  return {
    app,
    db,
    disk,
    url,
    log,
    close: async () => {
      await app.close();
      await db.close();
      disk.unmount();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type ProxiedApp = OutageApp & { proxy: TcpProxy };

/** The app on a PostgreSQL schema of its own, reached through a TCP proxy the test can cut. */
export async function appBehindProxy(env: Record<string, string> = {}): Promise<ProxiedApp> {
  const target = new URL(TEST_DATABASE_URL);
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  target.port = String(await proxy.start());
  const url = target.toString();
  const db = connect(url, { schema, poolSize: 5 });
  await migrateToLatest(db);
  const { app, log, dataDir } = await appOn(db, url, env);
  return {
    app,
    db,
    proxy,
    log,
    close: async () => {
      await proxy.up();
      await app.close();
      await db.close();
      await proxy.close();
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Asserts that an answer says nothing of the inside: no driver code, no error text of the
 * database, no address or port of it, no stack. `ports`: the database's ports in this test.
 */
export function assertSaysNothingInside(what: string, answer: { body: string; headers: Record<string, unknown> }, ports: readonly number[] = []): void {
  const text = `${JSON.stringify(answer.headers)}\n${answer.body}`;
  for (const word of ['SQLITE', 'ECONNREFUSED', 'ECONNRESET', '127.0.0.1', 'disk is full', 'disk I/O', 'Connection terminated', 'statusCode', 'Internal Server Error']) {
    assert.ok(!text.includes(word), `${what} shows "${word}": ${answer.body.slice(0, 300)}`);
  }
  for (const port of [5432, ...ports]) assert.ok(!new RegExp(`\\b${port}\\b`).test(text), `${what} shows the database's port ${port}`);
  assert.doesNotMatch(answer.body, /^\s+at /m, `${what} shows a stack`);
}

/** The error lines of the log whose error has a stack: each is a failure logged in full. */
export function stackLines(lines: LogLine[]): LogLine[] {
  return lines.filter((line) => line.level >= 50 && typeof line.err?.stack === 'string' && line.err.stack !== '');
}

/** Each kind of failure (its message, code and what failed) is logged in full once, however many requests met it; returns the kinds. */
export function assertEachLoggedOnce(lines: LogLine[]): string[] {
  const kinds = stackLines(lines).map((line) => `${line.msg} ${line.err?.code ?? line.err?.stack?.split('\n')[0]} ${String(line.what ?? '')}`);
  assert.ok(kinds.length > 0, 'the failure is logged');
  assert.equal(new Set(kinds).size, kinds.length, `each kind in full once:\n${kinds.join('\n')}`);
  return kinds;
}

/** Asks `condition` up to `tries` times, 100 ms apart (a count: a slow machine only makes each try slower). */
export async function eventually(what: string, condition: () => Promise<boolean> | boolean, tries = 100): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    if (await condition()) return;
    assert.ok(attempt < tries, `${what}: still not so after ${tries} tries`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
