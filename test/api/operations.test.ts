// GET /up for load balancers, and ETag / If-None-Match on the public reads.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { buildTestApp, createTestDatabase, testConfig, type TestApp } from '../helpers.js';
import { insertPost } from './support.js';

describe('GET /up', () => {
  it('answers 200 JSON while the database answers, and says the rate-limit store is memory', async () => {
    const t = await buildTestApp();
    try {
      const response = await t.app.inject({ url: '/up' });
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['content-type']), /^application\/json/);
      assert.deepEqual(response.json(), { status: 'ok', database: true, rate_limit_store: { kind: 'memory', ok: true } });
    } finally {
      await t.close();
    }
  });

  it('answers 503 once the database is gone, and the process keeps serving', async () => {
    const database = await createTestDatabase();
    const app = await buildApp(testConfig(), { db: database.db });
    await app.ready();
    try {
      await app.db.close();
      const down = await app.inject({ url: '/up' });
      assert.equal(down.statusCode, 503);
      assert.match(String(down.headers['content-type']), /^application\/json/);
      assert.deepEqual(down.json(), { status: 'unavailable', database: false, rate_limit_store: { kind: 'memory', ok: true } });
      const again = await app.inject({ url: '/up' });
      assert.equal(again.statusCode, 503);
      const api = await app.inject({ url: '/api/settings' });
      assert.ok(api.statusCode >= 500, String(api.statusCode));
      assert.deepEqual(Object.keys(api.json()).sort(), ['errors', 'message']);
    } finally {
      await app.close();
      await database.drop().catch(() => undefined);
    }
  });
});

describe('ETag on public reads', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await insertPost(t.db, { slug: 'etag-post', title: 'ETag' });
  });
  after(() => t.close());

  for (const url of ['/api/posts', '/api/posts?locale=en&per_page=5', '/api/posts/etag-post', '/api/settings']) {
    it(`GET ${url} sends an ETag and answers If-None-Match with 304 and no body`, async () => {
      const first = await t.app.inject({ url });
      assert.equal(first.statusCode, 200);
      const etag = first.headers.etag;
      assert.ok(typeof etag === 'string' && etag.length > 2, 'an ETag header');
      const cached = await t.app.inject({ url, headers: { 'if-none-match': etag } });
      assert.equal(cached.statusCode, 304);
      assert.equal(cached.body, '');
      const listed = await t.app.inject({ url, headers: { 'if-none-match': `W/"other", ${etag}` } });
      assert.equal(listed.statusCode, 304, 'one of several listed tags matches');
      const stale = await t.app.inject({ url, headers: { 'if-none-match': 'W/"something-else"' } });
      assert.equal(stale.statusCode, 200);
      assert.equal(stale.body, first.body);
    });
  }

  it('tags every body with the weak SHA-1 of its bytes, also when the same page is answered again', async () => {
    for (const url of ['/api/posts', '/api/posts?locale=en&per_page=5', '/api/posts/etag-post', '/api/settings']) {
      for (let i = 0; i < 2; i += 1) {
        const response = await t.app.inject({ url });
        assert.equal(response.headers.etag, `W/"${createHash('sha1').update(response.rawPayload).digest('base64')}"`, url);
      }
    }
  });

  it('changes the ETag when the content changes', async () => {
    const before = await t.app.inject({ url: '/api/posts' });
    await insertPost(t.db, { slug: 'etag-newer', title: 'Newer', published_at: new Date(Date.now() - 1000).toISOString() });
    const after = await t.app.inject({ url: '/api/posts', headers: { 'if-none-match': String(before.headers.etag) } });
    assert.equal(after.statusCode, 200);
    assert.notEqual(after.headers.etag, before.headers.etag);

    const settings = await t.app.inject({ url: '/api/settings' });
    await t.app.services.settings.put('site_name', 'Renamed', true);
    const renamed = await t.app.inject({ url: '/api/settings', headers: { 'if-none-match': String(settings.headers.etag) } });
    assert.equal(renamed.statusCode, 200);
  });

  it('sends no 304 for an error answer', async () => {
    const missing = await t.app.inject({ url: '/api/posts/nope' });
    assert.equal(missing.statusCode, 404);
    const again = await t.app.inject({ url: '/api/posts/nope', headers: { 'if-none-match': String(missing.headers.etag ?? '*') } });
    assert.equal(again.statusCode, 404);
  });
});
