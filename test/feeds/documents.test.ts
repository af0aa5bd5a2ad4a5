// What /feed.xml, /sitemap.xml and /robots.txt share: their types, the API's conditional answers
// (a weak ETag, an empty 304 for a matching If-None-Match, a new tag once the document
// changes), a short public freshness, HEAD, and no session: no cookie set, no session row written.
// And robots.txt's own lines.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PRIVATE_AREAS } from '../../src/http/feeds/robots.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { login } from '../web/support.js';
import { APP_URL, createPost, daysFromNow } from './support.js';

const DOCUMENTS = [
  { url: '/feed.xml', type: 'application/atom+xml; charset=utf-8' },
  { url: '/feed.xml?locale=fr', type: 'application/atom+xml; charset=utf-8' },
  { url: '/sitemap.xml', type: 'application/xml; charset=utf-8' },
  { url: '/robots.txt', type: 'text/plain; charset=utf-8' },
] as const;

describe('the feed, the sitemap and robots.txt as HTTP answers', () => {
  let t: TestApp;
  const sessionRows = async () => Number((await t.db.kysely.selectFrom('sessions').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);
  before(async () => {
    // The default http APP_URL: the cookie jar signs in over plain HTTP.
    t = await buildTestApp();
    await createPost(t.app, { title: 'First', slug: 'first', published_at: daysFromNow(-2) });
    await createPost(t.app, { title: 'Premier', slug: 'premier', locale: 'fr', published_at: daysFromNow(-2) });
  });
  after(() => t.close());

  for (const { url, type } of DOCUMENTS) {
    it(`${url}: typed, publicly cacheable for a short time, with a weak ETag; a matching If-None-Match is an empty 304`, async () => {
      const first = await t.app.inject({ url });
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['content-type'], type);
      assert.equal(first.headers['cache-control'], 'public, max-age=300');
      const tag = first.headers.etag;
      assert.ok(typeof tag === 'string' && tag.startsWith('W/"'), `weak ETag, got ${String(tag)}`);
      for (const condition of [tag, tag.slice(2), `W/"other", ${tag}`, '*']) {
        const again = await t.app.inject({ url, headers: { 'if-none-match': condition } });
        assert.equal(again.statusCode, 304, `If-None-Match: ${condition}`);
        assert.equal(again.body, '');
        assert.equal(again.headers.etag, tag);
        assert.equal(again.headers['cache-control'], 'public, max-age=300');
      }
      const other = await t.app.inject({ url, headers: { 'if-none-match': 'W/"something-else"' } });
      assert.equal(other.statusCode, 200);
      assert.equal(other.body, first.body);
    });

    it(`${url}: answers HEAD with the headers and no body`, async () => {
      const head = await t.app.inject({ method: 'HEAD', url });
      const get = await t.app.inject({ url });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
      assert.equal(head.headers['content-type'], type);
      assert.equal(head.headers.etag, get.headers.etag);
    });

    it(`${url}: sets no cookie and writes no session row, for a visitor or a signed-in user`, async () => {
      const before = await sessionRows();
      const anonymous = await t.app.inject({ url });
      assert.equal(anonymous.headers['set-cookie'], undefined);
      assert.equal(await sessionRows(), before);

      const user = await createUser(t.app);
      const client = new WebClient(t.app);
      await login(client, user.email, user.plainPassword);
      assert.ok(client.cookies.has(SESSION_COOKIE));
      const signedIn = await client.get(url);
      assert.equal(signedIn.statusCode, 200);
      assert.equal(signedIn.headers['set-cookie'], undefined);
      assert.equal(await sessionRows(), before + 1, 'only the sign-in wrote a session row');
    });
  }

  it('a 404 (a language not offered) is never a 304, and sets no cookie either', async () => {
    const missing = await t.app.inject({ url: '/feed.xml?locale=de' });
    assert.equal(missing.statusCode, 404);
    const again = await t.app.inject({ url: '/feed.xml?locale=de', headers: { 'if-none-match': String(missing.headers.etag) } });
    assert.equal(again.statusCode, 404);
    assert.equal(again.headers['set-cookie'], undefined);
  });

  it('gives the feed and the sitemap a new tag once a post is published, edited or withdrawn; robots.txt keeps its own', async () => {
    const tags = async () => Promise.all(['/feed.xml', '/sitemap.xml', '/robots.txt'].map(async (url) => (await t.app.inject({ url })).headers.etag));
    const stale = async (url: string, tag: unknown) => (await t.app.inject({ url, headers: { 'if-none-match': String(tag) } })).statusCode;
    const [feed0, sitemap0, robots0] = await tags();
    const post = await createPost(t.app, { title: 'Second', slug: 'second', published_at: daysFromNow(-1) });
    const [feed1, sitemap1, robots1] = await tags();
    assert.notEqual(feed1, feed0);
    assert.notEqual(sitemap1, sitemap0);
    assert.equal(robots1, robots0);
    assert.equal(await stale('/feed.xml', feed0), 200);
    assert.equal(await stale('/sitemap.xml', sitemap0), 200);
    assert.equal(await stale('/robots.txt', robots0), 304);

    await t.app.services.posts.update(post, { title: 'Second, edited' });
    const [feed2] = await tags();
    assert.notEqual(feed2, feed1);
    await t.app.services.posts.update(post, { status: 'archived' });
    const [feed3, sitemap3] = await tags();
    assert.notEqual(feed3, feed2);
    assert.notEqual(sitemap3, sitemap1);
  });
});

describe('GET /robots.txt', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ APP_URL });
  });
  after(() => t.close());

  it('lets crawlers read the public site, keeps them out of the private areas, and names the sitemap by its absolute address', async () => {
    const lines = (await t.app.inject({ url: '/robots.txt' })).body.split('\n');
    assert.equal(lines[0], 'User-agent: *');
    assert.ok(lines.includes('Allow: /'));
    for (const area of ['/admin', '/dashboard', '/profile', '/security', '/user/', '/api/', '/_dev/']) assert.ok(lines.includes(`Disallow: ${area}`), area);
    assert.equal(lines.filter((line) => line.startsWith('Disallow:')).length, PRIVATE_AREAS.length);
    assert.ok(!lines.includes('Disallow: /'), 'the public site stays allowed');
    assert.ok(!lines.some((line) => /^Disallow: \/(blog|feed|sitemap)/.test(line)));
    assert.ok(lines.includes(`Sitemap: ${APP_URL}/sitemap.xml`));
  });
});
