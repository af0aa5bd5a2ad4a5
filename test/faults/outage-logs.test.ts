// Logs during an outage (issue 25 §6): 13 seconds of PostgreSQL away wrote 22,428 error lines with
// full stacks (11 MB). Now each kind of failure is logged in full once, the same failure again only
// counted (one line per interval, src/lib/failure-log.ts, whose unit test drives the interval), and
// the recovery is logged once. With real failures: PostgreSQL behind a cut TCP proxy, SQLite on a
// full tmpfs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser, issueToken } from '../helpers.js';
import { appBehindProxy, appOnSmallDisk, assertEachLoggedOnce, eventually, type LogLine, type OutageApp, type ProxiedApp, type FullDiskApp } from '../support/outage-app.js';
import { needsPostgres, sqliteOnly } from '../support/services.js';
import { skipWithoutTmpfs } from '../support/tmpfs.js';

const REQUESTS = 300;

/** REQUESTS failing requests of several kinds, 30 at a time; returns how many answered 503. */
async function outage(t: OutageApp, token: string): Promise<number> {
  const calls = [
    { method: 'GET', url: '/api/user' },
    { method: 'PUT', url: '/api/user', payload: { name: 'During the outage' } },
    { method: 'GET', url: '/blog' },
    { method: 'GET', url: '/' },
    // A guest's form page writes nothing (its CSRF secret is a cookie): a second write instead.
    { method: 'PUT', url: '/api/user', payload: { name: 'Still during the outage' } },
  ] as const;
  let unavailable = 0;
  for (let sent = 0; sent < REQUESTS; sent += 30) {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const call = calls[(sent + i) % calls.length]!;
        return t.app.inject({ method: call.method, url: call.url, headers: { authorization: `Bearer ${token}` }, ...('payload' in call ? { payload: call.payload } : {}) });
      }),
    );
    unavailable += answers.filter((answer) => answer.statusCode === 503).length;
  }
  return unavailable;
}

const errorLines = (lines: LogLine[]) => lines.filter((line) => line.level >= 50);
const recoveries = (lines: LogLine[]) => lines.filter((line) => line.msg === 'database recovered');

/** A few lines for hundreds of failures, each kind in full once; then one recovery line once it is back. */
async function assertFewLinesThenOneRecovery(what: string, t: OutageApp, failed: number, restore: () => Promise<void> | void): Promise<void> {
  const during = errorLines(t.log());
  const bytes = during.reduce((sum, line) => sum + JSON.stringify(line).length + 1, 0);
  console.log(`FIGURES outage-logs ${what}: ${failed} requests answered 503, ${during.length} error lines (${bytes} bytes)`);
  assertEachLoggedOnce(t.log());
  assert.ok(during.length <= 12, `${during.length} error lines for ${failed} failed requests:\n${during.map((line) => line.msg).join('\n')}`);
  assert.ok(during.every((line) => line.msg !== 'request' && line.repeated === undefined), 'no count line yet: the interval has not passed');
  assert.deepEqual(recoveries(t.log()), [], 'no recovery while it is down');

  await restore();
  await eventually('the recovery is logged', () => recoveries(t.log()).length > 0);
  const [recovered] = recoveries(t.log());
  assert.equal(recovered!.level, 30);
  assert.ok(Number(recovered!.failures) >= failed, `the recovery line counts the failures: ${String(recovered!.failures)} for ${failed}`);
  // Probed again and again since (every second while failures were open): still one line.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  assert.equal(recoveries(t.log()).length, 1, 'the recovery is logged once');
}

describe('logs while PostgreSQL is cut', { skip: needsPostgres }, () => {
  let t: ProxiedApp;
  let token: string;
  before(async () => {
    t = await appBehindProxy();
    const user = await createUser(t.app);
    token = await issueToken(t.app, user.email, user.plainPassword);
    // Connections in the pool, so that the cut is seen by idle ones as well.
    await Promise.all(Array.from({ length: 5 }, () => t.app.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${token}` } })));
  });
  after(() => t?.close());

  it(`writes a few lines for ${REQUESTS} failed requests, and one when PostgreSQL is back`, async () => {
    await t.proxy.down();
    const failed = await outage(t, token);
    assert.ok(failed >= REQUESTS * 0.8, `${failed} of ${REQUESTS} answered 503`);
    await assertFewLinesThenOneRecovery('PostgreSQL cut', t, failed, () => t.proxy.up());
    const me = await t.app.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.statusCode, 200);
  });
});

describe('logs while the disk under SQLite is full', { skip: sqliteOnly('a full disk under the SQLite file') || skipWithoutTmpfs() }, () => {
  let t: FullDiskApp;
  let token: string;
  before(async () => {
    t = await appOnSmallDisk();
    const user = await createUser(t.app);
    token = await issueToken(t.app, user.email, user.plainPassword);
  });
  after(() => t?.close());

  it(`writes a few lines for ${REQUESTS} failed requests, and one when space is freed`, async () => {
    t.disk.fill();
    const failed = await outage(t, token);
    assert.ok(failed >= REQUESTS * 0.4, `${failed} of ${REQUESTS} answered 503 (the writes)`);
    await assertFewLinesThenOneRecovery('SQLite full disk', t, failed, () => t.disk.free());
  });
});
