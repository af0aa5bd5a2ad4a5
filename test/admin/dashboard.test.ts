// /admin: the figures (users, verified users, published and draft posts, active tokens), the
// latest posts and the latest audit lines; /admin/audit: the whole log, page by page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { signedInAdmin, type Admin } from './support.js';
import { characters } from '../support/client.js';

const stat = (html: string, id: string): number => Number(new RegExp(`id="stat-${id}">(\\d+)<`).exec(html)?.[1]);

describe('/admin dashboard', () => {
  let t: TestApp;
  let admin: Admin;
  let client: WebClient;
  before(async () => {
    t = await buildTestApp({ SANCTUM_EXPIRATION: '60' });
    ({ admin, client } = await signedInAdmin(t, { name: 'Dash Admin' }));
  });
  after(() => t.close());

  it('counts users, verified users, published and draft posts, and active tokens', async () => {
    const verified = await createUser(t.app, { verified: true });
    await createUser(t.app, { verified: false });
    await createUser(t.app, { verified: false });
    const posts = t.app.services.posts;
    await posts.create(admin.id, { title: 'P1', status: 'published' });
    await posts.create(admin.id, { title: 'P2', status: 'published', published_at: '2999-01-01T00:00:00.000Z' });
    await posts.create(admin.id, { title: 'D1' });
    await posts.create(admin.id, { title: 'D2' });
    await posts.create(admin.id, { title: 'D3' });
    await posts.create(admin.id, { title: 'A1', status: 'archived' });
    const tokens = t.app.services.tokens;
    await tokens.issue(verified.id, 'active');
    await tokens.issue(verified.id, 'active too');
    const aged = await tokens.issue(verified.id, 'older than the lifetime');
    await t.db.kysely.updateTable('personal_access_tokens').set({ created_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', aged.id).execute();
    const ownExpiry = await tokens.issue(verified.id, 'own expiry passed');
    await t.db.kysely.updateTable('personal_access_tokens').set({ expires_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', ownExpiry.id).execute();
    const revoked = await tokens.issue(verified.id, 'revoked');
    await tokens.revoke(revoked.id);

    const response = await client.get('/admin');
    assert.equal(response.statusCode, 200);
    // The administrator made by the CLI is a verified user too.
    assert.deepEqual(
      { users: stat(response.body, 'users'), verified: stat(response.body, 'verified'), published: stat(response.body, 'published'), drafts: stat(response.body, 'drafts'), tokens: stat(response.body, 'tokens') },
      { users: 4, verified: 2, published: 2, drafts: 3, tokens: 2 },
    );
  });

  it('lists the latest five posts, newest first, each linked to its editor', async () => {
    for (const title of ['Old 1', 'Old 2', 'Newer 3', 'Newer 4', 'Newer 5', 'Newest 6']) {
      await t.app.services.posts.create(admin.id, { title });
    }
    const response = await client.get('/admin');
    const section = response.body.slice(response.body.indexOf('id="latest-posts"'), response.body.indexOf('id="latest-audit"'));
    const titles = [...section.matchAll(/<a href="\/admin\/posts\/\d+\/edit">([^<]+)<\/a>/g)].map((m) => m[1]);
    assert.deepEqual(titles, ['Newest 6', 'Newer 5', 'Newer 4', 'Newer 3', 'Old 2']);
  });

  it('lists the latest audit lines: who, what, when', async () => {
    await client.submit('/admin/settings/new', '/admin/settings', { key: 'dash_check', type: 'text', value: 'x' });
    const response = await client.get('/admin');
    const section = response.body.slice(response.body.indexOf('id="latest-audit"'));
    const first = /<li>\s*<time datetime="([^"]+)">[^<]+<\/time>\s*<span class="audit-text"><strong>([^<]+)<\/strong> <span class="muted">\(([^)]+)\)<\/span>\s*([^<]+)</.exec(section);
    assert.ok(first, 'an audit line');
    const [, when, who, email, what] = first;
    assert.ok(Math.abs(Date.parse(when ?? '') - Date.now()) < 60_000);
    assert.equal(who, 'Dash Admin');
    assert.equal(email, admin.email);
    assert.equal(what?.trim(), 'added the setting dash_check');
    assert.match(section, /logged in to the panel/);
  });
});

describe('/admin/audit', () => {
  let t: TestApp;
  let client: WebClient;
  before(async () => {
    t = await buildTestApp();
    let admin: Admin;
    ({ admin, client } = await signedInAdmin(t));
    for (let i = 0; i < 30; i += 1) await t.app.services.audit.record(admin, 'setting.updated', { type: 'setting', id: `k${i}`, label: `key_${String(i).padStart(2, '0')}` }, { fields: ['value'] });
  });
  after(() => t.close());

  it('shows the whole log newest first, 25 lines a page', async () => {
    const first = await client.get('/admin/audit');
    assert.equal(first.statusCode, 200);
    const labels = (html: string) => [...html.matchAll(/changed the setting (key_\d+)/g)].map((m) => m[1]);
    assert.equal(labels(first.body).length, 25);
    assert.equal(labels(first.body)[0], 'key_29');
    assert.match(first.body, /changed: value/);
    // 30 lines, the admin:create line of the administrator (the command line), the panel login.
    assert.match(first.body, /Page 1 of 2 · 32 in all/);
    const second = await client.get('/admin/audit?page=2');
    assert.deepEqual(labels(second.body), ['key_04', 'key_03', 'key_02', 'key_01', 'key_00']);
    assert.match(second.body, /logged in to the panel/);
  });

  it('speaks French to a French visitor', async () => {
    const response = await client.get('/admin/audit', { 'accept-language': 'fr-FR,fr;q=0.9' });
    assert.match(response.body, /a modifié le réglage key_29/);
    assert.match(characters(response.body), /<h1>Journal d’audit<\/h1>/);
  });
});
