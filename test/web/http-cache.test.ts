// Anonymous public answers are kept over HTTP, as each route declares (config.cache,
// plugins/http-cache.ts): a 200 that sets no cookie, to a request that carries no session, gets
// a weak ETag of its body, an empty 304 for a matching If-None-Match and `public` with a short
// max-age. Signed-in pages, answers that set a cookie and errors stay `no-store`. The tag is of
// the body each request renders: a change made through one instance shows on the next request
// to another.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { REMEMBER_COOKIE } from '../../src/http/shared/remember-cookie.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { bearer, buildTestApp, createUser, issueToken, twoInstances, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { login } from './support.js';

const PAGES = ['/', '/blog', '/blog/kept'];
const PAGE_CACHE = 'public, max-age=60';
const HOUR = 3_600_000;

/** A post published an hour ago, written through the service. */
const publish = (app: FastifyInstance, slug: string, title: string) =>
  app.services.posts.create(null, { title, slug, excerpt: `About ${title}.`, body: `Body of ${title}.`, locale: 'en', status: 'published', published_at: new Date(Date.now() - HOUR).toISOString() });

const sha1Tag = (body: Buffer) => `W/"${createHash('sha1').update(body).digest('base64')}"`;

// Declared routes of the test's own that set a cookie: one starts a session, one sets a plain cookie.
async function cookieRoutes(app: FastifyInstance): Promise<void> {
  const cache = { public: 60 };
  app.get('/test/starts-session', { config: { auth: 'public', cache } }, async (request) => {
    request.session.intended = '/blog';
    return 'a page that starts a session';
  });
  app.get('/test/sets-cookie', { config: { auth: 'public', cache } }, async (_request, reply) => reply.setCookie('locale', 'fr', { path: '/' }).send('a page that sets a cookie'));
}

describe('HTTP caching of the public pages', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({}, { browserRoutes: cookieRoutes });
    await publish(t.app, 'kept', 'Kept');
  });
  after(() => t.close());

  for (const url of PAGES) {
    it(`${url}: an anonymous visitor gets a weak ETag of the body and public, max-age=60, with its Vary`, async () => {
      const response = await t.app.inject({ url });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], PAGE_CACHE);
      assert.equal(response.headers.etag, sha1Tag(response.rawPayload));
      assert.equal(response.headers.vary, 'Accept-Language, Cookie');
      assert.equal(response.headers['set-cookie'], undefined);
    });

    it(`${url}: a matching If-None-Match (exact, without W/, in a list, or *) is a 304 with no body and no Content-Type`, async () => {
      const first = await t.app.inject({ url });
      const tag = String(first.headers.etag);
      for (const condition of [tag, tag.slice(2), `W/"other", ${tag}`, '*']) {
        const again = await t.app.inject({ url, headers: { 'if-none-match': condition } });
        assert.equal(again.statusCode, 304, `If-None-Match: ${condition}`);
        assert.equal(again.body, '');
        assert.equal(again.headers['content-type'], undefined);
        assert.equal(again.headers['content-length'], undefined);
        assert.equal(again.headers.etag, tag);
        assert.equal(again.headers['cache-control'], PAGE_CACHE);
        assert.equal(again.headers.vary, 'Accept-Language, Cookie');
      }
      const other = await t.app.inject({ url, headers: { 'if-none-match': 'W/"something-else"' } });
      assert.equal(other.statusCode, 200);
      assert.equal(other.body, first.body);
    });

    it(`${url}: HEAD answers the same headers as GET, and a 304 for a matching tag`, async () => {
      const get = await t.app.inject({ url });
      const head = await t.app.inject({ method: 'HEAD', url });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
      assert.equal(head.headers.etag, get.headers.etag);
      assert.equal(head.headers['cache-control'], PAGE_CACHE);
      assert.equal(head.headers['content-type'], get.headers['content-type']);
      const conditional = await t.app.inject({ method: 'HEAD', url, headers: { 'if-none-match': String(get.headers.etag) } });
      assert.equal(conditional.statusCode, 304);
      assert.equal(conditional.headers['content-type'], undefined);
    });
  }

  it('keeps a language chosen by header or cookie public: Vary tells the caches apart', async () => {
    for (const headers of [{ 'accept-language': 'fr' }, { cookie: 'locale=fr' }]) {
      const response = await t.app.inject({ url: '/blog', headers });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], PAGE_CACHE, JSON.stringify(headers));
    }
  });

  it('sends a signed-in visitor every page private (no-store, never public, never a 304)', async () => {
    const user = await createUser(t.app);
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const anonymous = await t.app.inject({ url: '/blog' });
    for (const url of PAGES) {
      const response = await client.get(url, { 'if-none-match': String(anonymous.headers.etag) });
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.headers['cache-control'], 'no-store', url);
      assert.match(response.body, /action="\/logout"/, url);
    }
  });

  it('counts a session cookie, a remember-me cookie or an Authorization header as a session, other cookies not', async () => {
    // /robots.txt reads no session and sets no cookie: the request alone decides.
    const url = '/robots.txt';
    for (const headers of [{ cookie: `${SESSION_COOKIE}=x` }, { cookie: `locale=fr; ${REMEMBER_COOKIE}=x` }, { authorization: 'Bearer 1|x' }]) {
      const response = await t.app.inject({ url, headers });
      assert.equal(response.statusCode, 200, JSON.stringify(headers));
      assert.equal(response.headers['cache-control'], 'no-store', JSON.stringify(headers));
    }
    const other = await t.app.inject({ url, headers: { cookie: 'locale=fr; XSRF-TOKEN=x' } });
    assert.equal(other.headers['cache-control'], 'public, max-age=300');
  });

  for (const url of ['/test/starts-session', '/test/sets-cookie']) {
    it(`${url}: an answer that sets a cookie is no-store, with no ETag and no 304`, async () => {
      const response = await t.app.inject({ url });
      assert.equal(response.statusCode, 200);
      assert.ok(response.headers['set-cookie'] !== undefined, 'the route sets a cookie');
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.equal(response.headers.etag, undefined);
      const conditional = await t.app.inject({ url, headers: { 'if-none-match': '*' } });
      assert.equal(conditional.statusCode, 200);
    });
  }

  it('sends an error no-store, with no ETag, and never a 304 for it', async () => {
    for (const url of ['/blog/missing', '/blog?page=99', '/feed.xml?locale=xx']) {
      const response = await t.app.inject({ url, headers: { 'if-none-match': '*' } });
      assert.equal(response.statusCode, 404, url);
      assert.equal(response.headers['cache-control'], 'no-store', url);
      assert.equal(response.headers.etag, undefined, url);
    }
  });

  it('leaves the pages that declare nothing no-store, with no ETag', async () => {
    for (const url of ['/login', '/register']) {
      const response = await t.app.inject({ url });
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.headers['cache-control'], 'no-store', url);
      assert.equal(response.headers.etag, undefined, url);
    }
  });

  it('the API’s public reads are revalidated on every use; a reader with a token gets its 304 and a private answer', async () => {
    const anonymous = await t.app.inject({ url: '/api/posts' });
    assert.equal(anonymous.headers['cache-control'], 'public, max-age=0');
    const user = await createUser(t.app);
    const token = await issueToken(t.app, user.email, user.plainPassword);
    const withToken = await t.app.inject({ url: '/api/posts', headers: bearer(token) });
    assert.equal(withToken.statusCode, 200);
    assert.equal(withToken.headers['cache-control'], 'no-store');
    assert.equal(withToken.headers.etag, anonymous.headers.etag);
    const again = await t.app.inject({ url: '/api/posts', headers: { ...bearer(token), 'if-none-match': String(withToken.headers.etag) } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.headers['cache-control'], 'no-store');
  });
});

describe('HTTP caching across two instances on one database', () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  let close: () => Promise<void>;
  before(async () => {
    ({ a, b, close } = await twoInstances());
    await publish(a, 'first', 'First post');
  });
  after(() => close());

  /** B's answer to a request that carries the tag B gave before the change. */
  const afterChange = async (url: string, change: () => Promise<unknown>) => {
    const before = await b.inject({ url });
    assert.equal((await b.inject({ url, headers: { 'if-none-match': String(before.headers.etag) } })).statusCode, 304, `${url} unchanged`);
    await change();
    return b.inject({ url, headers: { 'if-none-match': String(before.headers.etag) } });
  };

  it('a post published through A is on B’s next answer, not a 304', async () => {
    for (const [index, url] of ['/', '/blog', '/feed.xml', '/api/posts'].entries()) {
      const title = `Published ${index}`;
      const response = await afterChange(url, () => publish(a, `published-${index}`, title));
      assert.equal(response.statusCode, 200, url);
      assert.ok(response.body.includes(title), url);
    }
  });

  it('a post edited through A shows edited on B’s next answer', async () => {
    await publish(a, 'edited', 'Before the edit');
    let round = 0;
    for (const url of ['/blog/edited', '/blog', '/feed.xml']) {
      round += 1;
      const title = `After edit ${round}`;
      const current = await a.services.posts.findPublished('edited', ['en']);
      assert.ok(current !== undefined);
      const response = await afterChange(url, () => a.services.posts.update(current, { title }));
      assert.equal(response.statusCode, 200, url);
      assert.ok(response.body.includes(title), url);
    }
  });

  it('a post withdrawn through A is gone from B’s next answer', async () => {
    await publish(a, 'withdrawn', 'Soon withdrawn');
    const list = await b.inject({ url: '/blog' });
    assert.ok(list.body.includes('Soon withdrawn'));
    const page = await afterChange('/blog/withdrawn', async () => {
      const post = await a.services.posts.findPublished('withdrawn', ['en']);
      assert.ok(post !== undefined);
      await a.services.posts.update(post, { status: 'draft' });
    });
    assert.equal(page.statusCode, 404);
    const again = await b.inject({ url: '/blog', headers: { 'if-none-match': String(list.headers.etag) } });
    assert.equal(again.statusCode, 200);
    assert.ok(!again.body.includes('Soon withdrawn'));
  });
});
