// GET /sitemap.xml: a valid sitemaps.org 0.9 urlset of the public site (the home page, the blog
// list of each offered language, every published post), translations linked with hreflang.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_URLS } from '../../src/http/feeds/sitemap.js';
import { buildTestApp, type TestApp } from '../helpers.js';
import { APP_URL, createPost, daysFromNow, parseXml, textOf } from './support.js';

type Alternate = { '@rel': string; '@hreflang': string; '@href': string };
type Url = { loc: unknown; lastmod?: unknown; 'xhtml:link'?: Alternate[] };

async function sitemap(t: TestApp): Promise<Url[]> {
  const response = await t.app.inject({ url: '/sitemap.xml' });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], 'application/xml; charset=utf-8');
  const urlset = parseXml(response.body).urlset as Record<string, unknown> & { url?: Url[] };
  assert.equal(urlset['@xmlns'], 'http://www.sitemaps.org/schemas/sitemap/0.9');
  assert.equal(urlset['@xmlns:xhtml'], 'http://www.w3.org/1999/xhtml');
  return urlset.url ?? [];
}

const locs = (urls: Url[]) => urls.map((url) => textOf(url.loc));
const find = (urls: Url[], loc: string) => urls.find((url) => textOf(url.loc) === loc);
const alternates = (url: Url | undefined) => (url?.['xhtml:link'] ?? []).map((link) => [link['@rel'], link['@hreflang'], link['@href']]);

describe('GET /sitemap.xml', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ APP_URL });
    await createPost(t.app, { title: 'Older', slug: 'older', published_at: daysFromNow(-20) });
    await createPost(t.app, { title: 'Hello & <welcome>', slug: 'hello', published_at: daysFromNow(-10) });
    await createPost(t.app, { title: 'Bonjour', slug: 'hello', locale: 'fr', published_at: daysFromNow(-9) });
    await createPost(t.app, { title: 'Seul', slug: 'seul', locale: 'fr', published_at: daysFromNow(-8) });
    await createPost(t.app, { title: 'Draft', slug: 'draft', status: 'draft' });
    await createPost(t.app, { title: 'Archived', slug: 'archived', status: 'archived', published_at: daysFromNow(-5) });
    await createPost(t.app, { title: 'Later', slug: 'later', published_at: daysFromNow(2) });
    // Written while the site offered German (a post's language is one the site offers), which it no longer does.
    await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
    await createPost(t.app, { title: 'Deutsch', slug: 'deutsch', locale: 'de', published_at: daysFromNow(-4) });
    await t.app.services.settings.put('locales', ['en', 'fr'], true);
  });
  after(() => t.close());

  it("lists the home page, each offered language's blog and every published post, newest first, as absolute addresses", async () => {
    assert.deepEqual(locs(await sitemap(t)), [
      `${APP_URL}/`,
      `${APP_URL}/blog`,
      `${APP_URL}/blog?locale=fr`,
      `${APP_URL}/blog/seul?locale=fr`,
      `${APP_URL}/blog/hello?locale=fr`,
      `${APP_URL}/blog/hello`,
      `${APP_URL}/blog/older`,
    ]);
  });

  it("gives each post its last change as lastmod, and the home page and lists their newest post's", async () => {
    const urls = await sitemap(t);
    const post = await t.app.services.posts.findPublished('older');
    assert.ok(post !== undefined);
    assert.equal(textOf(find(urls, `${APP_URL}/blog/older`)?.lastmod), new Date(post.updated_at).toISOString());
    const times = (await Promise.all(['seul', 'hello', 'older'].map((slug) => t.app.services.posts.findPublished(slug, ['fr'])))).map((each) => new Date(each?.updated_at ?? '').toISOString());
    assert.equal(textOf(find(urls, `${APP_URL}/blog?locale=fr`)?.lastmod), [times[0], times[1]].sort().at(-1));
    assert.equal(textOf(find(urls, `${APP_URL}/`)?.lastmod), urls.slice(3).map((url) => textOf(url.lastmod)).sort().at(-1));
  });

  it('links the translations of a slug to each other, each listing all of them and x-default', async () => {
    const urls = await sitemap(t);
    const expected = [
      ['alternate', 'fr', `${APP_URL}/blog/hello?locale=fr`],
      ['alternate', 'en', `${APP_URL}/blog/hello`],
      ['alternate', 'x-default', `${APP_URL}/blog/hello`],
    ];
    assert.deepEqual(alternates(find(urls, `${APP_URL}/blog/hello`)), expected);
    assert.deepEqual(alternates(find(urls, `${APP_URL}/blog/hello?locale=fr`)), expected);
    assert.deepEqual(alternates(find(urls, `${APP_URL}/blog/seul?locale=fr`)), [], 'a post without translation has no alternates');
    assert.deepEqual(alternates(find(urls, `${APP_URL}/blog?locale=fr`)), [
      ['alternate', 'en', `${APP_URL}/blog`],
      ['alternate', 'fr', `${APP_URL}/blog?locale=fr`],
      ['alternate', 'x-default', `${APP_URL}/blog`],
    ]);
  });

  it('follows the offered languages and the default one', async () => {
    await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
    await t.app.services.settings.put('default_locale', 'fr', true);
    try {
      const shown = locs(await sitemap(t));
      assert.ok(shown.includes(`${APP_URL}/blog/deutsch?locale=de`));
      assert.ok(shown.includes(`${APP_URL}/blog/hello?locale=en`));
      assert.ok(shown.includes(`${APP_URL}/blog/seul`));
      assert.ok(shown.includes(`${APP_URL}/blog?locale=de`));
    } finally {
      await t.app.services.settings.put('locales', ['en', 'fr'], true);
      await t.app.services.settings.put('default_locale', 'en', true);
    }
  });
});

describe('GET /sitemap.xml over time', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ APP_URL });
  });
  after(() => t.close());

  it('lists a post scheduled for later once its time has come, and not before', async () => {
    await createPost(t.app, { title: 'Out', slug: 'out', published_at: daysFromNow(-1) });
    const at = Date.now() + 3000;
    await createPost(t.app, { title: 'Soon', slug: 'soon', published_at: new Date(at).toISOString() });
    const listed = async () => locs(await sitemap(t)).includes(`${APP_URL}/blog/soon`);
    // Read before its time (the answer came back before it), twice: the second may be a kept one.
    const early = [await listed(), await listed()];
    if (Date.now() < at) assert.deepEqual(early, [false, false]);
    else assert.fail('the machine took over 3 s to answer: raise the delay');
    let seen = false;
    for (let tries = 0; tries < 100 && !seen; tries += 1) {
      await sleep(100);
      seen = await listed();
    }
    assert.ok(seen, 'listed once its time has come');
    assert.ok(Date.now() >= at, 'listed only once its time has come');
  });

  it('shows a post written after the last read at the next one', async () => {
    const before = locs(await sitemap(t));
    await createPost(t.app, { title: 'Fresh', slug: 'fresh', published_at: daysFromNow(-0.5) });
    const after = locs(await sitemap(t));
    assert.ok(!before.includes(`${APP_URL}/blog/fresh`));
    assert.ok(after.includes(`${APP_URL}/blog/fresh`));
  });
});

describe(`GET /sitemap.xml beyond ${MAX_URLS} addresses`, () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ APP_URL });
  });
  after(() => t.close());

  it('stops at the protocol limit, leaving out the oldest posts', async () => {
    // One more post than fits beside the home page and the two lists, written in one go.
    const count = MAX_URLS - 2;
    const now = Date.now();
    const rows = Array.from({ length: count }, (_, i) => {
      const at = new Date(now - (i + 1) * 60_000).toISOString();
      return { author_id: null, title: `P${i}`, slug: `p-${i}`, excerpt: '', body: '', locale: 'en', status: 'published' as const, published_at: at, created_at: at, updated_at: at };
    });
    for (let start = 0; start < rows.length; start += 2000) await t.db.kysely.insertInto('posts').values(rows.slice(start, start + 2000)).execute();
    const response = await t.app.inject({ url: '/sitemap.xml' });
    assert.equal(response.statusCode, 200);
    const shown = [...response.body.matchAll(/<loc>([^<]*)<\/loc>/g)].map((match) => match[1]);
    assert.equal(shown.length, MAX_URLS);
    assert.equal(shown[3], `${APP_URL}/blog/p-0`);
    assert.equal(shown.at(-1), `${APP_URL}/blog/p-${count - 2}`);
    assert.ok(!shown.includes(`${APP_URL}/blog/p-${count - 1}`), 'the oldest post is left out');
  });
});
