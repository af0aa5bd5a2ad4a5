// The public blog, server-rendered: /blog lists the published posts of the visitor's language,
// newest first, `posts_per_page` to a page (a change is seen at the next request, by every
// instance); /blog/{slug} shows one post with its neighbours; the home page shows the newest
// posts. Drafts, archived posts, posts scheduled for later and unknown pages are the 404 page.
// Every page carries its head metadata (canonical URL, Open Graph, hreflang, the Atom feed),
// escaped, and links nowhere but to the site itself.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { PostStatus } from '../../src/modules/posts/posts.repository.js';
import { buildTestApp, createUser, twoInstances, type TestApp } from '../helpers.js';
import { decode, signedInAdmin, siteForm } from '../admin/support.js';

const APP_URL = 'http://localhost:3000';
const HOUR = 3_600_000;

type PostFields = { title: string; slug?: string; excerpt?: string; body?: string; locale?: string; status?: PostStatus; at?: Date | null; author?: number | null };

let sequence = 0;
/** A post written through the service; published an hour ago unless told otherwise. */
async function write(app: FastifyInstance, fields: PostFields) {
  sequence += 1;
  const status = fields.status ?? 'published';
  const at = fields.at === undefined ? new Date(Date.now() - HOUR) : fields.at;
  return app.services.posts.create(fields.author ?? null, {
    title: fields.title,
    slug: fields.slug ?? `post-${sequence}`,
    excerpt: fields.excerpt ?? `About ${fields.title}.`,
    body: fields.body ?? `Body of ${fields.title}.`,
    locale: fields.locale ?? 'en',
    status,
    published_at: at === null ? null : at.toISOString(),
  });
}

/** `count` published English posts, the newest first in the returned list, an hour apart. */
async function writeMany(app: FastifyInstance, count: number, locale = 'en'): Promise<string[]> {
  const titles: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const title = `${locale} post ${String(i + 1).padStart(2, '0')}`;
    await write(app, { title, slug: `${locale}-post-${i + 1}`, locale, at: new Date(Date.now() - (count - i) * HOUR) });
    titles.unshift(title);
  }
  return titles;
}

const get = (app: FastifyInstance, url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
/** The titles a list page shows, in order. */
const titlesOf = (html: string) => [...html.matchAll(/class="post-item-title"><a href="[^"]*">([^<]*)<\/a>/g)].map((m) => decode(m[1] ?? ''));
const hrefsOf = (html: string) => [...html.matchAll(/class="post-item-title"><a href="([^"]*)">/g)].map((m) => decode(m[1] ?? ''));
const mainOf = (html: string) => html.slice(html.indexOf('<main'), html.indexOf('</main>'));
const metaOf = (html: string, name: string) => {
  const match = new RegExp(`<meta (?:name|property)="${name}" content="([^"]*)">`).exec(html);
  return match === null ? null : decode(match[1] ?? '');
};
const linkOf = (html: string, rel: string) => {
  const match = new RegExp(`<link rel="${rel}" href="([^"]*)">`).exec(html);
  return match === null ? null : decode(match[1] ?? '');
};
const hreflangsOf = (html: string) => [...html.matchAll(/<link rel="alternate" hreflang="([^"]*)" href="([^"]*)">/g)].map((m) => [m[1], decode(m[2] ?? '')]);
const titleOf = (html: string) => decode(/<title>([^<]*)<\/title>/.exec(html)?.[1] ?? '');
const pageOf = (html: string) => /<p>Page (\d+) of (\d+)<\/p>/.exec(html)?.slice(1).map(Number) ?? null;

/** Asserts the site's 404 page (not a crash, not a 500, not an empty list). */
function assertNotFoundPage(response: { statusCode: number; body: string; headers: Record<string, unknown> }, what: string): void {
  assert.equal(response.statusCode, 404, what);
  assert.match(String(response.headers['content-type']), /text\/html/, what);
  assert.match(response.body, /<p class="error-code">404<\/p>/, what);
}

describe('/blog: the list', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(() => t.close());

  it('lists the published posts of the visitor’s language, newest first, with date, excerpt and author', async () => {
    const author = await createUser(t.app, { name: 'Grace Hopper' });
    await write(t.app, { title: 'Older', at: new Date('2026-03-01T10:00:00Z'), author: author.id, excerpt: 'The older one.' });
    await write(t.app, { title: 'Newer', at: new Date('2026-03-05T10:00:00Z'), author: author.id });
    await write(t.app, { title: 'A draft', status: 'draft', at: null });
    await write(t.app, { title: 'Archived', status: 'archived' });
    await write(t.app, { title: 'Scheduled', at: new Date(Date.now() + 24 * HOUR) });
    await write(t.app, { title: 'En français', locale: 'fr' });
    const response = await get(t.app, '/blog');
    assert.equal(response.statusCode, 200);
    const html = response.body;
    assert.deepEqual(titlesOf(html), ['Newer', 'Older']);
    assert.match(html, /<time datetime="2026-03-01T10:00:00.000Z">March 1, 2026<\/time>/);
    assert.match(html, /The older one\./);
    assert.match(html, /by Grace Hopper/);
    // In French, the French post and a French date.
    const french = (await get(t.app, '/blog', { 'accept-language': 'fr-FR,fr;q=0.9' })).body;
    assert.deepEqual(titlesOf(french), ['En français']);
    const dated = await get(t.app, '/blog?locale=en', { cookie: 'locale=fr' });
    assert.deepEqual(titlesOf(dated.body), ['Newer', 'Older']);
    assert.match(dated.body, /<time datetime="2026-03-01T10:00:00.000Z">1 mars 2026<\/time>/);
  });

  it('pages the list by 15 by default, with newer/older links and "page x of y"', async () => {
    const titles = await writeMany(t.app, 17);
    const first = (await get(t.app, '/blog')).body;
    assert.deepEqual(titlesOf(first), titles.slice(0, 15));
    assert.deepEqual(pageOf(first), [1, 2]);
    assert.match(first, /<a class="blog-pager-older" href="\/blog\?page=2" rel="next">/);
    assert.doesNotMatch(first, /blog-pager-newer/);
    const second = (await get(t.app, '/blog?page=2')).body;
    assert.deepEqual(titlesOf(second), titles.slice(15));
    assert.deepEqual(pageOf(second), [2, 2]);
    assert.match(second, /<a class="blog-pager-newer" href="\/blog" rel="prev">/);
    assert.doesNotMatch(second, /blog-pager-older/);
    // One page: no pager at all.
    await t.app.services.settings.put('posts_per_page', 20, true);
    assert.doesNotMatch((await get(t.app, '/blog')).body, /blog-pager/);
  });

  it('answers the 404 page for a page past the last or a page that is no page number', async () => {
    await writeMany(t.app, 3);
    for (const query of ['page=2', 'page=0', 'page=-1', 'page=abc', 'page=1.5', 'page=1e3', 'page=', 'page=99999999999999999999', 'page=1&page=2']) {
      assertNotFoundPage(await get(t.app, `/blog?${query}`), query);
    }
    assert.equal((await get(t.app, '/blog?page=1')).statusCode, 200);
  });

  it('shows an empty first page (not a 404) when nothing is published yet', async () => {
    const response = await get(t.app, '/blog');
    assert.equal(response.statusCode, 200);
    assert.match(mainOf(response.body), /No posts yet\./);
  });

  it('takes posts_per_page from the settings at the next request, and 15 for a missing or unusable value', async () => {
    const titles = await writeMany(t.app, 17);
    await t.app.services.settings.put('posts_per_page', 5, true);
    const five = (await get(t.app, '/blog')).body;
    assert.deepEqual(titlesOf(five), titles.slice(0, 5));
    assert.deepEqual(pageOf(five), [1, 4]);
    assert.deepEqual(titlesOf((await get(t.app, '/blog?page=4')).body), titles.slice(15));
    // Digits typed as text in the panel mean the same number.
    await t.app.services.settings.put('posts_per_page', '7', true);
    assert.deepEqual(pageOf((await get(t.app, '/blog')).body), [1, 3]);
    for (const unusable of [0, 101, 2.5, -3, 'ten', '', null, [5], { n: 5 }]) {
      await t.app.services.settings.put('posts_per_page', unusable, true);
      const html = (await get(t.app, '/blog')).body;
      assert.equal(titlesOf(html).length, 15, JSON.stringify(unusable));
    }
    await t.db.kysely.deleteFrom('settings').where('key', '=', 'posts_per_page').execute(); // a database without it (the services never delete it)
    assert.equal(titlesOf((await get(t.app, '/blog')).body).length, 15);
    // The API's default stays 15 whatever the setting.
    await t.app.services.settings.put('posts_per_page', 4, true);
    const api = (await get(t.app, '/api/posts')).json() as { meta: { per_page: number } };
    assert.equal(api.meta.per_page, 15);
  });

  it('shows a posts_per_page changed in the panel on the next page', async () => {
    await writeMany(t.app, 9);
    const { client } = await signedInAdmin(t);
    await client.get('/admin/settings');
    const created = await client.post('/admin/settings/site', siteForm({ posts_per_page: '4' }));
    assert.equal(created.statusCode, 303, created.body);
    assert.deepEqual(pageOf((await get(t.app, '/blog')).body), [1, 3]);
    const saved = await client.post('/admin/settings/site', siteForm({ posts_per_page: '3' }));
    assert.equal(saved.statusCode, 303, saved.body);
    assert.deepEqual(pageOf((await get(t.app, '/blog')).body), [1, 3]);
    assert.equal(titlesOf((await get(t.app, '/blog')).body).length, 3);
  });

  it('picks the language: ?locale= when the site offers it (any case), else the cookie, Accept-Language, default_locale', async () => {
    await write(t.app, { title: 'English', locale: 'en' });
    await write(t.app, { title: 'Français', locale: 'fr' });
    // Written while the site offered German (a post's language is one the site offers).
    await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
    await write(t.app, { title: 'Deutsch', locale: 'de' });
    await t.app.services.settings.put('locales', ['en', 'fr'], true);
    assert.deepEqual(titlesOf((await get(t.app, '/blog')).body), ['English']);
    assert.deepEqual(titlesOf((await get(t.app, '/blog', { cookie: 'locale=fr' })).body), ['Français']);
    assert.deepEqual(titlesOf((await get(t.app, '/blog', { 'accept-language': 'fr' })).body), ['Français']);
    assert.deepEqual(titlesOf((await get(t.app, '/blog?locale=fr')).body), ['Français']);
    assert.deepEqual(titlesOf((await get(t.app, '/blog?locale=FR', { 'accept-language': 'en' })).body), ['Français']);
    // Without a `locales` setting any language is accepted for posts.
    await t.db.kysely.deleteFrom('settings').where('key', '=', 'locales').execute(); // a database without it (the services never delete it)
    assert.deepEqual(titlesOf((await get(t.app, '/blog?locale=de')).body), ['Deutsch']);
    await t.app.services.settings.put('locales', ['en', 'fr'], true);
    assertNotFoundPage(await get(t.app, '/blog?locale=de'), 'a language not offered');
    for (const bad of ['x', 'en_US!', '../etc', 'en&locale=fr']) assertNotFoundPage(await get(t.app, `/blog?locale=${encodeURIComponent(bad)}`), bad);
    await t.app.services.settings.put('default_locale', 'fr', true);
    assert.deepEqual(titlesOf((await get(t.app, '/blog')).body), ['Français']);
    // The interface stays in the visitor's language while the posts are the ones asked for.
    const mixed = (await get(t.app, '/blog?locale=en', { cookie: 'locale=fr' })).body;
    assert.match(mixed, /<html lang="fr">/);
    assert.match(mixed, /<li class="post-item" lang="en">/);
    assert.match(mixed, /<p class="post-meta" lang="fr">/);
  });

  it('shows a post scheduled for later at its time, and not before', async () => {
    await write(t.app, { title: 'Already out' });
    const at = Date.now() + 3000;
    await write(t.app, { title: 'Coming soon', slug: 'coming-soon', at: new Date(at) });
    const visible = async () => {
      const [list, post] = await Promise.all([get(t.app, '/blog'), get(t.app, '/blog/coming-soon')]);
      return { list: titlesOf(list.body).includes('Coming soon'), post: post.statusCode };
    };
    // Seen before its time (the answer came back before it), the post is nowhere.
    const early = await visible();
    if (Date.now() < at) assert.deepEqual(early, { list: false, post: 404 });
    else assert.fail('the machine took over 3 s to answer: raise the delay');
    let seen = early;
    for (let tries = 0; tries < 100 && !(seen.list && seen.post === 200); tries += 1) {
      await sleep(100);
      seen = await visible();
    }
    assert.deepEqual(seen, { list: true, post: 200 });
    assert.ok(Date.now() >= at, 'shown only once its time has come');
    assert.deepEqual(titlesOf((await get(t.app, '/blog')).body), ['Coming soon', 'Already out']);
  });

  it('varies with Accept-Language and Cookie, and may be kept a minute by caches (test/web/http-cache.test.ts)', async () => {
    for (const url of ['/', '/blog']) {
      const response = await get(t.app, url);
      assert.equal(response.headers.vary, 'Accept-Language, Cookie', url);
      assert.equal(response.headers['cache-control'], 'public, max-age=60', url);
    }
  });
});

describe('/blog/{slug}: one post', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(() => t.close());

  it('shows the title, the date in the visitor’s language, the author and the sanitized body', async () => {
    const author = await createUser(t.app, { name: 'Ada Lovelace' });
    await write(t.app, {
      title: 'Notes on the engine',
      slug: 'notes',
      author: author.id,
      at: new Date('2026-02-10T08:30:00Z'),
      body: '## Part one\n\nSome **bold** text.\n\n<script>alert(1)</script><img src="x" onerror="alert(2)"><a href="javascript:alert(3)">x</a>',
    });
    const response = await get(t.app, '/blog/notes');
    assert.equal(response.statusCode, 200);
    const main = mainOf(response.body);
    assert.match(main, /<h1>Notes on the engine<\/h1>/);
    assert.match(main, /<time datetime="2026-02-10T08:30:00.000Z">February 10, 2026<\/time>/);
    assert.match(main, /by Ada Lovelace/);
    assert.match(main, /<h2>Part one<\/h2>/);
    assert.match(main, /<strong>bold<\/strong>/);
    assert.doesNotMatch(main, /<script|onerror|javascript:/);
    assert.match(main, /<article class="blog-post" lang="en">/);
    assert.equal(titleOf(response.body), 'Notes on the engine · Tessera');
    const french = await get(t.app, '/blog/notes', { 'accept-language': 'fr' });
    assert.match(french.body, /<time datetime="2026-02-10T08:30:00.000Z">10 février 2026<\/time>/);
    assert.match(french.body, /par Ada Lovelace/);
  });

  it('links the previous and next posts of the same language, by date then id, and the list', async () => {
    const same = new Date('2026-01-02T00:00:00Z');
    await write(t.app, { title: 'First', slug: 'first', at: new Date('2026-01-01T00:00:00Z') });
    await write(t.app, { title: 'Second', slug: 'second', at: same });
    await write(t.app, { title: 'Third', slug: 'third', at: same });
    await write(t.app, { title: 'Fourth', slug: 'fourth', at: new Date('2026-01-03T00:00:00Z') });
    await write(t.app, { title: 'Not English', slug: 'french', locale: 'fr', at: new Date('2026-01-02T12:00:00Z') });
    await write(t.app, { title: 'Draft between', slug: 'draft', status: 'draft', at: null });
    await write(t.app, { title: 'Later', slug: 'later', at: new Date(Date.now() + 24 * HOUR) });
    const neighbours = async (slug: string) => {
      const html = (await get(t.app, `/blog/${slug}`)).body;
      const previous = /class="blog-neighbour previous" href="([^"]*)"/.exec(html)?.[1] ?? null;
      const next = /class="blog-neighbour next" href="([^"]*)"/.exec(html)?.[1] ?? null;
      assert.match(html, /<p class="blog-back"><a href="\/blog">All posts<\/a><\/p>/);
      return [previous, next];
    };
    assert.deepEqual(await neighbours('first'), [null, '/blog/second']);
    assert.deepEqual(await neighbours('second'), ['/blog/first', '/blog/third']);
    assert.deepEqual(await neighbours('third'), ['/blog/second', '/blog/fourth']);
    assert.deepEqual(await neighbours('fourth'), ['/blog/third', null]);
    // The French post's back link goes to the French list.
    assert.match((await get(t.app, '/blog/french?locale=fr')).body, /<p class="blog-back"><a href="\/blog\?locale=fr">/);
  });

  it('answers the 404 page for a draft, an archived post, a post scheduled for later or an unknown slug', async () => {
    await write(t.app, { title: 'Draft', slug: 'draft', status: 'draft', at: null });
    await write(t.app, { title: 'Archived', slug: 'archived', status: 'archived' });
    await write(t.app, { title: 'Later', slug: 'later', at: new Date(Date.now() + HOUR) });
    await write(t.app, { title: 'Out', slug: 'out' });
    for (const slug of ['draft', 'archived', 'later', 'unknown', 'x'.repeat(90), '%00', 'a%2Fb', 'Out', 'out%20', 'caf%C3%A9']) {
      assertNotFoundPage(await get(t.app, `/blog/${slug}`), slug);
    }
    assertNotFoundPage(await get(t.app, '/blog/out?locale=zz-bad!'), 'a malformed locale');
  });

  it('picks the translation: ?locale=, else the visitor’s language, then the default language', async () => {
    await write(t.app, { title: 'Hello', slug: 'hello', locale: 'en' });
    await write(t.app, { title: 'Bonjour', slug: 'hello', locale: 'fr' });
    await write(t.app, { title: 'Only French', slug: 'seul', locale: 'fr' });
    const h1 = async (url: string, headers: Record<string, string> = {}) => /<h1>([^<]*)<\/h1>/.exec((await get(t.app, url, headers)).body)?.[1];
    assert.equal(await h1('/blog/hello'), 'Hello');
    assert.equal(await h1('/blog/hello', { 'accept-language': 'fr' }), 'Bonjour');
    assert.equal(await h1('/blog/hello', { cookie: 'locale=fr' }), 'Bonjour');
    assert.equal(await h1('/blog/hello?locale=fr'), 'Bonjour');
    assert.equal(await h1('/blog/hello?locale=en', { cookie: 'locale=fr' }), 'Hello');
    // A post in one language only is shown to everyone.
    assert.equal(await h1('/blog/seul'), 'Only French');
    await t.app.services.settings.put('locales', ['en', 'fr'], true);
    assertNotFoundPage(await get(t.app, '/blog/hello?locale=de'), 'a language not offered');
  });
});

describe('head metadata', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ APP_URL });
    await t.app.services.settings.put('site_name', 'Les Carnets', true);
    await t.app.services.settings.put('site_description', 'Notes from the workshop.', true);
  });
  afterEach(() => t.close());

  it('gives a post its title, excerpt, canonical URL, Open Graph article tags and feed', async () => {
    await write(t.app, { title: 'A post', slug: 'a-post', excerpt: 'What the post says.', at: new Date('2026-04-01T09:00:00Z') });
    const html = (await get(t.app, '/blog/a-post')).body;
    assert.equal(titleOf(html), 'A post · Les Carnets');
    assert.equal(metaOf(html, 'description'), 'What the post says.');
    assert.equal(linkOf(html, 'canonical'), `${APP_URL}/blog/a-post`);
    assert.equal(metaOf(html, 'og:type'), 'article');
    assert.equal(metaOf(html, 'og:title'), 'A post');
    assert.equal(metaOf(html, 'og:description'), 'What the post says.');
    assert.equal(metaOf(html, 'og:url'), `${APP_URL}/blog/a-post`);
    assert.equal(metaOf(html, 'og:site_name'), 'Les Carnets');
    assert.equal(metaOf(html, 'og:locale'), 'en');
    assert.equal(metaOf(html, 'article:published_time'), '2026-04-01T09:00:00.000Z');
    assert.match(html, /<link rel="alternate" type="application\/atom\+xml" title="Les Carnets" href="\/feed.xml\?locale=en">/);
    // One language: no hreflang alternates.
    assert.deepEqual(hreflangsOf(html), []);
    // No excerpt: the site's description.
    await write(t.app, { title: 'Bare', slug: 'bare', excerpt: '' });
    assert.equal(metaOf((await get(t.app, '/blog/bare')).body, 'description'), 'Notes from the workshop.');
  });

  it('lists every published translation as an hreflang alternate, with x-default', async () => {
    await write(t.app, { title: 'Hello', slug: 'hello', locale: 'en' });
    await write(t.app, { title: 'Bonjour', slug: 'hello', locale: 'fr' });
    await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
    await write(t.app, { title: 'Hallo', slug: 'hello', locale: 'de', status: 'draft', at: null });
    await t.app.services.settings.put('locales', ['en', 'fr'], true);
    const expected = [
      ['en', `${APP_URL}/blog/hello`],
      ['fr', `${APP_URL}/blog/hello?locale=fr`],
      ['x-default', `${APP_URL}/blog/hello`],
    ];
    const english = (await get(t.app, '/blog/hello')).body;
    assert.deepEqual(hreflangsOf(english), expected);
    const french = (await get(t.app, '/blog/hello?locale=fr')).body;
    assert.deepEqual(hreflangsOf(french), expected);
    assert.equal(linkOf(french, 'canonical'), `${APP_URL}/blog/hello?locale=fr`);
    assert.equal(metaOf(french, 'og:locale'), 'fr');
    assert.match(mainOf(french), /<article class="blog-post" lang="fr">/);
    // Its date and author line is in the reader's language (English here), and says so.
    assert.match(mainOf(french), /<p class="post-meta" lang="en">/);
    assert.match(mainOf(french), /<a href="\/blog\/hello" hreflang="en" lang="en">English<\/a>/);
  });

  it('gives the list and the home page the site’s description, their canonical URL and Open Graph website tags', async () => {
    await writeMany(t.app, 3);
    await t.app.services.settings.put('posts_per_page', 2, true);
    const list = (await get(t.app, '/blog?page=2')).body;
    assert.equal(titleOf(list), 'Blog, page 2 · Les Carnets');
    assert.equal(metaOf(list, 'description'), 'Notes from the workshop.');
    assert.equal(linkOf(list, 'canonical'), `${APP_URL}/blog?page=2`);
    assert.equal(metaOf(list, 'og:type'), 'website');
    assert.equal(metaOf(list, 'og:url'), `${APP_URL}/blog?page=2`);
    assert.equal(linkOf((await get(t.app, '/blog?page=1')).body, 'canonical'), `${APP_URL}/blog`);
    const french = (await get(t.app, '/blog', { 'accept-language': 'fr' })).body;
    assert.equal(linkOf(french, 'canonical'), `${APP_URL}/blog?locale=fr`);
    assert.match(french, /<link rel="alternate" type="application\/atom\+xml" title="Les Carnets \(français\)" href="\/feed.xml\?locale=fr">/);
    assert.deepEqual(hreflangsOf(french), [
      ['en', `${APP_URL}/blog`],
      ['fr', `${APP_URL}/blog?locale=fr`],
      ['x-default', `${APP_URL}/blog`],
    ]);
    const home = (await get(t.app, '/')).body;
    assert.equal(titleOf(home), 'Les Carnets');
    assert.equal(linkOf(home, 'canonical'), `${APP_URL}/`);
    assert.equal(metaOf(home, 'og:type'), 'website');
    assert.equal(metaOf(home, 'og:site_name'), 'Les Carnets');
    assert.equal(metaOf(home, 'description'), 'Notes from the workshop.');
  });

  it('escapes a hostile title, excerpt and site name everywhere they are written', async () => {
    const hostile = '"><script>alert(1)</script><meta http-equiv="refresh" content="0">';
    await t.app.services.settings.put('site_name', `Site ${hostile}`, true);
    await write(t.app, { title: `Title ${hostile}`, slug: 'hostile', excerpt: `Excerpt ${hostile}` });
    for (const url of ['/', '/blog', '/blog/hostile']) {
      const html = (await get(t.app, url)).body;
      assert.doesNotMatch(html, /<script>|<meta http-equiv/, url);
      assert.match(html, /&lt;script&gt;/, url);
    }
    const html = (await get(t.app, '/blog/hostile')).body;
    assert.equal(metaOf(html, 'og:title'), `Title ${hostile}`);
    assert.equal(metaOf(html, 'description'), `Excerpt ${hostile}`);
  });

  it('links nowhere but the site itself', async () => {
    await write(t.app, { title: 'Hello', slug: 'hello', locale: 'en' });
    await write(t.app, { title: 'Bonjour', slug: 'hello', locale: 'fr' });
    for (const url of ['/', '/blog', '/blog/hello', '/blog/hello?locale=fr']) {
      const html = (await get(t.app, url)).body;
      const urls = [...html.matchAll(/\s(?:href|src|content)="([^"]*)"/g)].map((m) => decode(m[1] ?? '')).filter((value) => /^[a-z]+:|^\/\//i.test(value));
      assert.ok(urls.length > 0, url);
      for (const each of urls) assert.ok(each.startsWith(`${APP_URL}/`), `${url}: ${each}`);
    }
  });
});

describe('the home page', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(() => t.close());

  it('lists the newest posts of the visitor’s language, up to posts_per_page, and links to the blog and the API documentation', async () => {
    const titles = await writeMany(t.app, 4);
    await write(t.app, { title: 'Un article', locale: 'fr' });
    await t.app.services.settings.put('posts_per_page', 3, true);
    const html = (await get(t.app, '/')).body;
    const main = mainOf(html);
    assert.deepEqual(titlesOf(main), titles.slice(0, 3));
    assert.deepEqual(hrefsOf(main), ['/blog/en-post-4', '/blog/en-post-3', '/blog/en-post-2']);
    assert.match(main, /<a href="\/blog">All posts<\/a>/);
    assert.match(main, /<a href="\/docs">/);
    // A visitor can still sign in or register.
    assert.match(main, /href="\/register"/);
    assert.match(main, /href="\/login"/);
    assert.match(html, /<li><a href="\/blog">Blog<\/a><\/li>/);
    const french = mainOf((await get(t.app, '/', { 'accept-language': 'fr' })).body);
    assert.deepEqual(titlesOf(french), ['Un article']);
    assert.match(french, /<a href="\/blog\?locale=fr">Tous les articles<\/a>/);
  });

  it('says there are no posts yet on an empty site', async () => {
    assert.match(mainOf((await get(t.app, '/')).body), /No posts yet\./);
  });
});

describe('the blog across two instances on one database', () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  let close: () => Promise<void>;
  before(async () => {
    ({ a, b, close } = await twoInstances());
  });
  after(() => close());

  it('a posts_per_page or a post saved through one instance shows on the other at its next request', async () => {
    await writeMany(a, 6);
    // B has served the list (kept in memory, where it can).
    for (let i = 0; i < 2; i += 1) assert.deepEqual(pageOf((await get(b, '/blog')).body), null);
    await a.services.settings.put('posts_per_page', 2, true);
    assert.deepEqual(pageOf((await get(b, '/blog')).body), [1, 3]);
    await write(a, { title: 'Fresh from A', slug: 'fresh' });
    assert.equal(titlesOf((await get(b, '/blog')).body)[0], 'Fresh from A');
    assert.equal((await get(b, '/blog/fresh')).statusCode, 200);
  });
});
