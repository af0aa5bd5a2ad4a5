// What the security page lists is kept in memory per user (perf/kept-reads.ts: the passkeys, the
// pending email change, the browser sessions), and stays exact across instances: a passkey
// added, used or removed, an email change asked for or withdrawn, a browser signed in or out
// through one instance shows on the next page of the other; a session that reaches its end
// leaves the list at that time, with no write in between. On PostgreSQL the page then reads none
// of them: its one round trip is the look at the change counters.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { advancePasskeyCounter, deletePasskey, insertPasskey } from '../../src/modules/passkeys/passkeys.repository.js';
import { createUser, twoInstances } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { postgresTraffic } from '../support/query-plan.js';
import { needsPostgres } from '../support/services.js';
import { login, secondInstanceShowing } from './support.js';

/** The handles of the sessions listed on a security page. */
const sessionsOf = (html: string): string[] => [...html.matchAll(/<tr data-session="([0-9a-f]+)"/g)].map((match) => match[1] ?? '');

describe('the security page, changed through another instance', () => {
  const kept = secondInstanceShowing('/security', 'kept-security@example.com');

  it('shows a passkey added, used and removed here on the next page there', async () => {
    const { a, user, page } = kept;
    assert.doesNotMatch(await page(), /Kept key/);
    const passkey = { userId: user.id, name: 'Kept key', credentialId: 'a2VwdC1rZXk', publicKey: 'cHVibGlj', counter: 0, transports: ['internal'], backedUp: false };
    const row = await insertPasskey(a.db, passkey, new Date());
    const added = await page();
    assert.match(added, /<td class="passkey-name">Kept key<\/td>/);
    assert.match(added, /<span class="muted">Never<\/span>/);
    await advancePasskeyCounter(a.db, row.id, 1, false, new Date('2026-11-30T08:00:00Z'));
    assert.match(await page(), /<time datetime="2026-11-30T08:00:00.000Z">/);
    await deletePasskey(a.db.kysely, user.id, row.id);
    assert.doesNotMatch(await page(), /Kept key/);
  });

  it('shows an email change asked for and withdrawn here on the next page there', async () => {
    const { a, user, page } = kept;
    assert.doesNotMatch(await page(), /kept-security-new@example\.com/);
    await a.services.emailChanges.request(user, 'kept-security-new@example.com', 'en');
    assert.match(await page(), /kept-security-new@example\.com/);
    await a.services.emailChanges.withdraw(user.id);
    assert.doesNotMatch(await page(), /kept-security-new@example\.com/);
  });

  it('lists a browser signed in here on the next page there, and drops it when it signs out', async () => {
    const { a, user, page } = kept;
    const before = sessionsOf(await page());
    const here = new WebClient(a);
    await login(here, user.email, user.plainPassword);
    const during = sessionsOf(await page());
    assert.equal(during.length, before.length + 1);
    await here.get('/dashboard');
    assert.equal((await here.post('/logout')).statusCode, 303);
    assert.deepEqual(sessionsOf(await page()), before);
  });

  it('drops a session from the list when it reaches its end, with nothing written in between', async () => {
    const { a, user, page } = kept;
    const before = sessionsOf(await page());
    const now = Date.now();
    await a.db.kysely
      .insertInto('sessions')
      .values({
        id: 'kept-security-ending',
        user_id: user.id,
        admin_user_id: null,
        payload: '{}',
        expires_at: new Date(now + 1500).toISOString(),
        updated_at: new Date(now).toISOString(),
        created_at: new Date(now).toISOString(),
        ip: '192.0.2.7',
        user_agent: null,
      })
      .execute();
    assert.equal(sessionsOf(await page()).length, before.length + 1);
    await sleep(Math.max(0, now + 1600 - Date.now()));
    assert.deepEqual(sessionsOf(await page()), before);
  });
});

describe('the security page on PostgreSQL, nothing changed', { skip: needsPostgres }, () => {
  let a: FastifyInstance;
  let close: () => Promise<void>;

  before(async () => {
    ({ a, close } = await twoInstances());
  });
  after(() => close());

  it('reads no row of its own the second time: its one round trip is the look at the change counters', async () => {
    const user = await createUser(a, { email: 'kept-security-looks@example.com' });
    const client = new WebClient(a);
    await login(client, user.email, user.plainPassword);
    await a.services.emailChanges.request(user, 'kept-security-looks-new@example.com', 'en');
    // The first page after the sign-in saves the session once more (what the sign-in flashed is taken).
    assert.equal((await client.get('/security')).statusCode, 200);
    assert.equal((await client.get('/security')).statusCode, 200);
    let body = '';
    const { sent, acquired } = await postgresTraffic(a.db, async () => (body = (await client.get('/security')).body));
    assert.match(body, /kept-security-looks-new@example\.com/);
    assert.equal(sessionsOf(body).length, 1);
    assert.deepEqual(sent, ['data_version'], 'nothing but the look reached the database');
    assert.equal(acquired, 0, 'no client was taken from the pool');
  });
});
