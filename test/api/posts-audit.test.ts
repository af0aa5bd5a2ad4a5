// Admin writes through the API leave the same audit line as the same change from the panel
// (post.created, post.updated with the changed fields, post.deleted), written by the same
// domain call, and the line says it came through the API and with which token (its id, never
// its secret). A refused write leaves none.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, buildTestApp, createUser, type TestApp } from '../helpers.js';
import { auditRows, signedInAdmin } from '../admin/support.js';
import { splitToken } from './support.js';
import { characters } from '../support/client.js';

describe('audit lines of the post writes through the API', () => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof createUser>>;
  let token: string;
  let tokenId: number;

  before(async () => {
    t = await buildTestApp();
    admin = await createUser(t.app, { name: 'Api Editor', admin: true });
    token = (await t.app.services.tokens.issue(admin.id, 'publishing-robot', ['posts:write'])).plaintext;
    tokenId = splitToken(token).id;
  });
  after(() => t.close());

  const send = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, payload, headers: bearer(token), remoteAddress: '198.51.100.9' });
  const linesAbout = async (postId: number) => (await auditRows(t)).filter((row) => row.subject_type === 'post' && row.subject_id === String(postId));

  it('writes post.created, post.updated with the changed fields and post.deleted, by the admin, through the token', async () => {
    const created = await send('POST', '/api/posts', { title: 'Audited news', body: 'First draft' });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().data.id as number;
    const [line] = await linesAbout(id);
    assert.ok(line, 'a line for the new post');
    assert.equal(line.action, 'post.created');
    assert.equal(line.user_id, admin.id);
    assert.equal(line.actor_name, 'Api Editor');
    assert.equal(line.actor_email, admin.email);
    assert.equal(line.subject_label, 'Audited news');
    assert.equal(line.ip, '198.51.100.9');
    assert.deepEqual(JSON.parse(line.details), { via: 'api', token: tokenId });

    const updated = await send('PUT', '/api/posts/audited-news', { title: 'Audited news, again', body: 'Second draft', status: 'published' });
    assert.equal(updated.statusCode, 200, updated.body);
    const [update] = await linesAbout(id);
    assert.equal(update?.action, 'post.updated');
    assert.equal(update.subject_label, 'Audited news, again');
    const details = JSON.parse(update.details) as { fields: string[]; via: string; token: number };
    assert.deepEqual(details.fields, ['title', 'body', 'status', 'published_at']);
    assert.equal(details.via, 'api');
    assert.equal(details.token, tokenId);

    // A write that changes nothing leaves no line, as in the panel.
    assert.equal((await send('PUT', '/api/posts/audited-news', { title: 'Audited news, again' })).statusCode, 200);
    assert.equal((await linesAbout(id)).length, 2);

    assert.equal((await send('DELETE', '/api/posts/audited-news')).statusCode, 204);
    const [deleted] = await linesAbout(id);
    assert.equal(deleted?.action, 'post.deleted');
    assert.equal(deleted.subject_label, 'Audited news, again');
    assert.deepEqual(JSON.parse(deleted.details), { via: 'api', token: tokenId });

    // The token's secret is nowhere in the log.
    const secret = token.slice(token.indexOf('|') + 1);
    for (const row of await auditRows(t)) assert.ok(!JSON.stringify(row).includes(secret));
  });

  it('leaves no line for a refused write', async () => {
    const before = (await auditRows(t)).length;
    assert.equal((await send('POST', '/api/posts', { title: '' })).statusCode, 422);
    assert.equal((await send('PUT', '/api/posts/no-such-post', { title: 'x' })).statusCode, 404);
    const reader = (await t.app.services.tokens.issue(admin.id, 'reader', ['posts:read'])).plaintext;
    const refused = await t.app.inject({ method: 'POST', url: '/api/posts', payload: { title: 'Nope' }, headers: bearer(reader) });
    assert.equal(refused.statusCode, 403);
    assert.equal((await auditRows(t)).length, before);
  });

  it('shows on the panel who wrote through the API, and with which token; panel lines say nothing of the kind', async () => {
    const created = await send('POST', '/api/posts', { title: 'Seen in the log' });
    assert.equal(created.statusCode, 201);
    const { client } = await signedInAdmin(t);
    const made = await client.submit('/admin/posts/new', '/admin/posts', { title: 'Made in the panel', locale: 'en', status: 'draft' });
    assert.equal(made.statusCode, 303, made.body);
    const [panelLine] = await auditRows(t);
    assert.equal(panelLine?.action, 'post.created');
    assert.deepEqual(JSON.parse(panelLine.details), {}, 'the panel line is as before');
    const page = await client.get('/admin/audit');
    assert.equal(page.statusCode, 200);
    assert.match(characters(page.body), new RegExp(`created the post “Seen in the log”[^<]*<span class="muted">— through the API, token #${tokenId}</span>`));
    assert.doesNotMatch(characters(page.body), /created the post “Made in the panel”[^<]*<span class="muted">— through the API/);
  });
});
