// /admin/tokens: every user's tokens (name, abilities, last use, expiry, never the hash), the
// filter by user, and revoking one token or all of a user's after a confirmation page.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { bearer, buildTestApp, createUser, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { auditRows, signedInAdmin } from './support.js';
import { characters } from '../support/client.js';

const names = (html: string): string[] => [...html.matchAll(/<tr>\s*<td>([^<]+)<\/td>/g)].map((m) => m[1] ?? '');

describe('/admin/tokens', () => {
  let t: TestApp;
  let client: WebClient;
  beforeEach(async () => {
    t = await buildTestApp({ SANCTUM_EXPIRATION: '60' });
    ({ client } = await signedInAdmin(t));
  });
  afterEach(() => t.close());

  const works = async (plaintext: string) => (await t.app.inject({ method: 'GET', url: '/api/user', headers: bearer(plaintext) })).statusCode === 200;

  it("lists every user's tokens with name, owner, abilities, last use and expiry, never the hash", async () => {
    const ada = await createUser(t.app, { name: 'Ada', email: 'ada@example.com' });
    const bob = await createUser(t.app, { name: 'Bob', email: 'bob@example.com' });
    const phone = await t.app.services.tokens.issue(ada.id, 'Ada phone');
    await t.app.services.tokens.issue(bob.id, 'Bob laptop', ['posts:read']);
    assert.ok(await works(phone.plaintext), 'using it sets last_used_at');
    const response = await client.get('/admin/tokens?sort=name&dir=asc');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(names(response.body), ['Ada phone', 'Bob laptop']);
    assert.match(response.body, /ada@example\.com/);
    assert.match(response.body, /<code class="chip">all<\/code>/);
    assert.match(response.body, /<code class="chip">posts:read<\/code>/);
    assert.match(response.body, /Never<\/span>/, 'the unused token');
    const row = await t.db.kysely.selectFrom('personal_access_tokens').select(['token', 'created_at']).where('id', '=', phone.id).executeTakeFirstOrThrow();
    assert.ok(!response.body.includes(row.token), 'no hash on the page');
    assert.ok(!response.body.includes(phone.plaintext.split('|')[1] ?? 'x'), 'no secret on the page');
    const expiry = new Date(Date.parse(row.created_at) + 60 * 60_000).toISOString();
    assert.match(response.body, new RegExp(`<time datetime="${expiry}">`), 'the expiry of the 60-minute lifetime');
  });

  it('shows one user\'s tokens, searches them, and sorts by last use', async () => {
    const ada = await createUser(t.app, { name: 'Ada' });
    const bob = await createUser(t.app, { name: 'Bob' });
    const used = await t.app.services.tokens.issue(ada.id, 'used');
    await t.app.services.tokens.issue(ada.id, 'unused');
    await t.app.services.tokens.issue(bob.id, 'bobs');
    await works(used.plaintext);
    const mine = await client.get(`/admin/tokens?user=${ada.id}&sort=name&dir=asc`);
    assert.deepEqual(names(mine.body), ['unused', 'used']);
    assert.match(mine.body, /<h1>Tokens of Ada<\/h1>/);
    assert.match(mine.body, new RegExp(`href="/admin/tokens/users/${ada.id}/revoke"`));
    const searched = await client.get('/admin/tokens?q=BOB');
    assert.deepEqual(names(searched.body), ['bobs']);
    const byUse = await client.get(`/admin/tokens?user=${ada.id}&sort=last_used_at&dir=desc`);
    assert.deepEqual(names(byUse.body), ['used', 'unused']);
  });

  it('revokes one token after a confirmation page: it stops working at once, the others do not', async () => {
    const ada = await createUser(t.app, { email: 'ada@example.com' });
    const revoked = await t.app.services.tokens.issue(ada.id, 'old phone');
    const kept = await t.app.services.tokens.issue(ada.id, 'new phone');
    const confirm = await client.get(`/admin/tokens/${revoked.id}/revoke`);
    assert.equal(confirm.statusCode, 200);
    assert.match(characters(confirm.body), /The token “old phone” of ada@example\.com will stop working at once\./);
    assert.ok(await works(revoked.plaintext), 'the confirmation page revokes nothing');
    const response = await client.post(`/admin/tokens/${revoked.id}/revoke`);
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, `/admin/tokens?user=${ada.id}`);
    assert.equal(await works(revoked.plaintext), false);
    assert.ok(await works(kept.plaintext));
    const [line] = await auditRows(t);
    assert.deepEqual([line?.action, line?.subject_id, line?.subject_label], ['token.revoked', String(revoked.id), 'old phone (ada@example.com)']);
    assert.ok(!JSON.stringify(line).includes(createHash('sha256').update(revoked.plaintext.split('|')[1] ?? '').digest('hex')));
  });

  it("revokes all of a user's tokens after a confirmation page, and no one else's", async () => {
    const ada = await createUser(t.app, { name: 'Ada', email: 'ada@example.com' });
    const bob = await createUser(t.app);
    const adas = [await t.app.services.tokens.issue(ada.id, 'a'), await t.app.services.tokens.issue(ada.id, 'b'), await t.app.services.tokens.issue(ada.id, 'c')];
    const bobs = await t.app.services.tokens.issue(bob.id, 'bob');
    const confirm = await client.get(`/admin/tokens/users/${ada.id}/revoke`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /Every token of Ada \(ada@example\.com\) will stop working at once/);
    const response = await client.post(`/admin/tokens/users/${ada.id}/revoke`);
    assert.equal(response.statusCode, 303);
    for (const token of adas) assert.equal(await works(token.plaintext), false);
    assert.ok(await works(bobs.plaintext));
    const [line] = await auditRows(t);
    assert.deepEqual([line?.action, line?.subject_label, JSON.parse(line?.details ?? '{}')], ['tokens.revoked_all', 'ada@example.com', { count: 3 }]);
    const page = await client.get(String(response.headers.location));
    assert.match(page.body, /role="status">3 tokens of Ada were revoked\.</);
  });

  it('marks expired tokens', async () => {
    const ada = await createUser(t.app);
    const token = await t.app.services.tokens.issue(ada.id, 'stale');
    await t.db.kysely.updateTable('personal_access_tokens').set({ created_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', token.id).execute();
    const response = await client.get('/admin/tokens');
    assert.match(response.body, /<time datetime="2020-01-01T01:00:00.000Z">Jan\s1,\s2020, 1:00\sAM\sUTC<\/time> <span class="badge status-archived">expired<\/span>/);
  });

  it('answers 404 for a token or a user that does not exist', async () => {
    for (const url of ['/admin/tokens/99999/revoke', '/admin/tokens/users/99999/revoke']) assert.equal((await client.get(url)).statusCode, 404, url);
    await client.get('/admin/tokens');
    assert.equal((await client.post('/admin/tokens/99999/revoke')).statusCode, 404);
  });
});
