// Two instances on one database under concurrent load, over real HTTP: while clients keep asking
// instance A, instance B revokes a token (or changes a post). Every request to A that was sent
// after B acknowledged the change must see it — on SQLite and on PostgreSQL, where A answers
// from memory after one shared look at the change counter per event-loop turn
// (src/perf/read-cache.ts).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { bearer, createTestDatabase, createUser, issueToken, onPostgres, testConfig, type TestDatabase } from '../helpers.js';

const CLIENTS = 16;
/** Answers wanted on each side of the change: counted, so a slow machine only takes longer. */
const ANSWERS = 50;

type Sample = { sentAt: number; status: number; body: string };

/** Resolves once `count` of the samples so far satisfy `which`. */
async function answered(samples: Sample[], count: number, which: (sample: Sample) => boolean): Promise<void> {
  while (samples.filter(which).length < count) await sleep(5);
}

/**
 * Keeps CLIENTS requests in flight to `url` while `during` runs (it sees the samples as they
 * come); records when each request was sent and its answer.
 */
async function hammer(url: string, headers: Record<string, string>, during: (samples: Sample[]) => Promise<void>): Promise<Sample[]> {
  const samples: Sample[] = [];
  let stopped = false;
  const clients = Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (!stopped) {
        const sentAt = performance.now();
        const response = await fetch(url, { headers });
        samples.push({ sentAt, status: response.status, body: await response.text() });
      }
    }),
  );
  try {
    await during(samples);
  } finally {
    stopped = true;
    await clients;
  }
  return samples;
}

describe(`two instances under load (${onPostgres ? 'PostgreSQL' : 'SQLite file'})`, () => {
  let database: TestDatabase;
  let a: FastifyInstance;
  let b: FastifyInstance;
  let aUrl: string;
  let bUrl: string;

  before(async () => {
    database = await createTestDatabase({ file: true });
    // Rate limits off: the load is the point here.
    const config = testConfig({ API_RATE_LIMIT: '0', LOGIN_RATE_LIMIT: '0' });
    a = await buildApp(config, { db: database.db });
    b = await buildApp(config, { db: database.connectAgain() });
    await b.services.settings.put('locales', ['en', 'fr', 'sv'], true);
    aUrl = await a.listen({ host: '127.0.0.1', port: 0 });
    bUrl = await b.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  it('no request sent after a revocation on the other instance is answered 200', async () => {
    const user = await createUser(a);
    const token = await issueToken(a, user.email, user.plainPassword);
    let ackAt = Infinity;
    const samples = await hammer(`${aUrl}/api/user`, bearer(token), async (live) => {
      await answered(live, ANSWERS, (sample) => sample.status === 200);
      const revoked = await fetch(`${bUrl}/api/tokens/current`, { method: 'DELETE', headers: bearer(token) });
      ackAt = performance.now();
      assert.equal(revoked.status, 204);
      await answered(live, ANSWERS, (sample) => sample.sentAt > ackAt);
    });
    const before = samples.filter((sample) => sample.sentAt < ackAt);
    const afterAck = samples.filter((sample) => sample.sentAt > ackAt);
    assert.ok(before.filter((sample) => sample.status === 200).length >= ANSWERS, 'the token worked before the revocation');
    assert.ok(afterAck.length >= ANSWERS, `enough requests after the revocation (${afterAck.length})`);
    const accepted = afterAck.filter((sample) => sample.status !== 401);
    assert.equal(accepted.length, 0, `${accepted.length} of ${afterAck.length} requests sent after the revocation were not refused`);
  });

  it('no request sent after a post change on the other instance gets the old list', async () => {
    const admin = await createUser(b, { admin: true });
    const token = await issueToken(b, admin.email, admin.plainPassword);
    const created = await fetch(`${bUrl}/api/posts`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Before', slug: 'changing-under-load', locale: 'sv', status: 'published' }),
    });
    assert.equal(created.status, 201);
    let ackAt = Infinity;
    const title = (sample: Sample) => (JSON.parse(sample.body) as { data: { title: string }[] }).data[0]?.title;
    const samples = await hammer(`${aUrl}/api/posts?locale=sv`, { accept: 'application/json' }, async (live) => {
      await answered(live, ANSWERS, (sample) => sample.status === 200 && title(sample) === 'Before');
      const changed = await fetch(`${bUrl}/api/posts/changing-under-load`, {
        method: 'PUT',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'After' }),
      });
      ackAt = performance.now();
      assert.equal(changed.status, 200);
      await answered(live, ANSWERS, (sample) => sample.sentAt > ackAt);
    });
    assert.ok(samples.filter((sample) => sample.sentAt < ackAt && title(sample) === 'Before').length >= ANSWERS, 'the old title was listed before the change');
    const afterAck = samples.filter((sample) => sample.sentAt > ackAt);
    assert.ok(afterAck.length >= ANSWERS, `enough requests after the change (${afterAck.length})`);
    const stale = afterAck.filter((sample) => sample.status !== 200 || title(sample) !== 'After');
    assert.equal(stale.length, 0, `${stale.length} of ${afterAck.length} requests sent after the change got the old list`);
  });
});
