// GET /feed.xml: a valid Atom 1.0 feed of one language's newest published posts, every address
// absolute from APP_URL, every text escaped so that it reads back exactly as written.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FEED_SIZE } from '../../src/http/feeds/feed.js';
import { escapeXml } from '../../src/http/feeds/xml.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { APP_URL, createPost, daysFromNow, parseXml, textOf } from './support.js';

type Entry = Record<string, unknown> & { link: { '@href': string; '@rel': string }[] };
type Feed = Record<string, unknown> & { entry?: Entry[]; link: { '@href': string; '@rel': string; '@type': string }[] };

async function feed(t: TestApp, query = ''): Promise<Feed> {
  const response = await t.app.inject({ url: `/feed.xml${query}` });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], 'application/atom+xml; charset=utf-8');
  const document = parseXml(response.body);
  const root = document.feed as Feed;
  assert.equal((root as Record<string, unknown>)['@xmlns'], 'http://www.w3.org/2005/Atom');
  return root;
}

const titles = (root: Feed) => (root.entry ?? []).map((entry) => textOf(entry.title));
const hrefOf = (links: { '@href': string; '@rel': string }[], rel: string) => links.find((link) => link['@rel'] === rel)?.['@href'];

// Titles that would end an element, open markup or a CDATA section if written as they are.
const HOSTILE = `<script>alert("x")</script> & 'q' ]]> <![CDATA[ &amp; </title>`;

describe('GET /feed.xml', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ APP_URL });
    await t.app.services.settings.put('site_name', 'Carnets', true);
    await t.app.services.settings.put('site_description', 'Notes & <essays>', true);
    const author = await createUser(t.app, { name: 'Ada <Lovelace> & co' });
    await createPost(t.app, { title: 'Oldest', slug: 'oldest', published_at: daysFromNow(-30), authorId: author.id, excerpt: 'First words' });
    await createPost(t.app, { title: 'Middle', slug: 'middle', published_at: daysFromNow(-20), body: 'Some **bold** text.\n\n<script>alert(1)</script>' });
    await createPost(t.app, { title: HOSTILE, slug: 'hostile', published_at: daysFromNow(-10), authorId: author.id, excerpt: `Excerpt ${HOSTILE}`, body: `A ]]> in text, and <b>html</b> & more.` });
    await createPost(t.app, { title: 'A draft', slug: 'a-draft', status: 'draft' });
    await createPost(t.app, { title: 'An archived post', slug: 'archived', status: 'archived', published_at: daysFromNow(-5) });
    await createPost(t.app, { title: 'Scheduled for tomorrow', slug: 'tomorrow', published_at: daysFromNow(1) });
    await createPost(t.app, { title: 'Un billet', slug: 'un-billet', locale: 'fr', published_at: daysFromNow(-3) });
    // Written while the site offered German (a post's language is one the site offers), which it no longer does.
    await t.app.services.settings.put('locales', ['en', 'fr', 'de'], true);
    await createPost(t.app, { title: 'Ein Beitrag', slug: 'ein-beitrag', locale: 'de', published_at: daysFromNow(-2) });
    await t.app.services.settings.put('locales', ['en', 'fr'], true);
  });
  after(() => t.close());

  it("lists the default language's published posts, newest first, and no draft, archived, scheduled or other-language post", async () => {
    assert.deepEqual(titles(await feed(t)), [HOSTILE, 'Middle', 'Oldest']);
  });

  it('describes the feed: a stable id, the site name and description, links to itself and the blog, the newest entry as its update', async () => {
    const root = await feed(t);
    assert.equal(textOf(root.id), `${APP_URL}/feed.xml?locale=en`);
    assert.equal(textOf(root.title), 'Carnets');
    assert.equal(textOf(root.subtitle), 'Notes & <essays>');
    assert.equal(root['@xml:lang'], 'en');
    assert.equal(hrefOf(root.link, 'self'), `${APP_URL}/feed.xml?locale=en`);
    assert.equal(hrefOf(root.link, 'alternate'), `${APP_URL}/blog`);
    assert.equal(textOf(root.generator), 'Tessera');
    assert.equal(textOf((root.author as Record<string, unknown>).name), 'Carnets');
    const entryTimes = (root.entry ?? []).map((entry) => textOf(entry.updated));
    assert.equal(textOf(root.updated), [...entryTimes].sort().at(-1));
  });

  it('gives each entry an id that survives a slug change, an absolute link, its times, author, excerpt and sanitized body', async () => {
    const root = await feed(t);
    const [hostile, middle, oldest] = root.entry ?? [];
    assert.ok(hostile !== undefined && middle !== undefined && oldest !== undefined);
    const post = await t.app.services.posts.findPublished('oldest');
    assert.ok(post !== undefined);
    assert.equal(textOf(oldest.id), `tag:blog.example.org,${new Date(post.created_at).toISOString().slice(0, 10)}:posts/${post.id}`);
    assert.equal(hrefOf(oldest.link, 'alternate'), `${APP_URL}/blog/oldest`);
    assert.equal(textOf(oldest.published), new Date(post.published_at ?? '').toISOString());
    assert.equal(textOf((oldest.author as Record<string, unknown>).name), 'Ada <Lovelace> & co');
    assert.equal(textOf(oldest.summary), 'First words');
    assert.equal(middle.author, undefined, 'an entry without an author leaves it to the feed');
    assert.equal(middle.summary, undefined, 'an empty excerpt is no summary');
    // The body as the API renders it: sanitized HTML, sent as escaped text.
    const api = (await t.app.inject({ url: '/api/posts/middle' })).json() as { data: { body_html: string } };
    assert.equal((middle.content as Record<string, unknown>)['@type'], 'html');
    assert.equal(textOf(middle.content), api.data.body_html);
    assert.doesNotMatch(textOf(middle.content), /<script/);

    // Renamed, the post keeps its entry id and gets the new link.
    await t.app.services.posts.update(post, { slug: 'oldest-renamed' });
    const renamed = (await feed(t)).entry?.at(-1);
    assert.equal(textOf(renamed?.id), textOf(oldest.id));
    assert.equal(hrefOf(renamed?.link ?? [], 'alternate'), `${APP_URL}/blog/oldest-renamed`);
    await t.app.services.posts.update({ ...post, slug: 'oldest-renamed' }, { slug: 'oldest' });
  });

  it('escapes every text, so that markup, ampersands and "]]>" read back exactly as written', async () => {
    const response = await t.app.inject({ url: '/feed.xml' });
    assert.doesNotMatch(response.body, /<script>/);
    // "]]>" may not stand in XML text as it is (XML 1.0 §2.4), a rule the parser does not check.
    assert.doesNotMatch(response.body, /\]\]>/);
    const hostile = (await feed(t)).entry?.[0];
    assert.equal(textOf(hostile?.title), HOSTILE);
    assert.equal(textOf(hostile?.summary), `Excerpt ${HOSTILE}`);
    assert.equal(textOf((hostile?.author as Record<string, unknown>).name), 'Ada <Lovelace> & co');
    assert.match(textOf(hostile?.content), /A \]\]&gt; in text/);
  });

  it('drops the characters XML cannot carry (control characters, a lone surrogate) instead of writing an unreadable feed', async () => {
    const other = await buildTestApp({ APP_URL });
    try {
      await createPost(other.app, { title: 'Bell\u0007, escape\u001B and \uFFFF', slug: 'bell', excerpt: 'tab\tkept, é and 😀 too' });
      const entry = (await feed(other)).entry?.[0];
      assert.equal(textOf(entry?.title), 'Bell, escape and ');
      assert.equal(textOf(entry?.summary), 'tab\tkept, é and 😀 too');
    } finally {
      await other.close();
    }
    // A lone surrogate never reaches the feed from the databases (stored as U+FFFD); the writer drops one all the same.
    assert.equal(escapeXml('a\uD800b\uDC00c'), 'abc');
  });

  it('serves the feed of another offered language with ?locale=, in any case, titled with the language', async () => {
    for (const query of ['?locale=fr', '?locale=FR']) {
      const root = await feed(t, query);
      assert.deepEqual(titles(root), ['Un billet']);
      assert.equal(textOf(root.id), `${APP_URL}/feed.xml?locale=fr`);
      assert.equal(textOf(root.title), 'Carnets (français)');
      assert.equal(root['@xml:lang'], 'fr');
      assert.equal(hrefOf(root.link, 'alternate'), `${APP_URL}/blog?locale=fr`);
      assert.equal(hrefOf(root.entry?.[0]?.link ?? [], 'alternate'), `${APP_URL}/blog/un-billet?locale=fr`);
    }
    assert.deepEqual(titles(await feed(t, '?locale=en')), [HOSTILE, 'Middle', 'Oldest']);
  });

  for (const [query, why] of [
    ['?locale=de', 'a language the locales setting does not name'],
    ['?locale=xx-', 'a malformed tag'],
    ['?locale=', 'an empty one'],
    ['?locale=en&locale=fr', 'two of them'],
    [`?locale=${'a'.repeat(300)}`, 'a very long one'],
  ] as const) {
    it(`answers 404, the site's page, for ${why}`, async () => {
      const response = await t.app.inject({ url: `/feed.xml${query}` });
      assert.equal(response.statusCode, 404);
      assert.match(String(response.headers['content-type']), /^text\/html/);
      assert.equal(response.headers['set-cookie'], undefined);
    });
  }

  it('serves any well-formed language while the locales setting names none', async () => {
    await t.db.kysely.deleteFrom('settings').where('key', '=', 'locales').execute(); // a database without it (the services never delete it)
    try {
      assert.deepEqual(titles(await feed(t, '?locale=de')), ['Ein Beitrag']);
    } finally {
      await t.app.services.settings.put('locales', ['en', 'fr'], true);
    }
    assert.equal((await t.app.inject({ url: '/feed.xml?locale=de' })).statusCode, 404);
  });

  it("follows the site's default language", async () => {
    await t.app.services.settings.put('default_locale', 'fr', true);
    try {
      const root = await feed(t);
      assert.deepEqual(titles(root), ['Un billet']);
      assert.equal(textOf(root.title), 'Carnets');
      assert.equal(hrefOf(root.entry?.[0]?.link ?? [], 'alternate'), `${APP_URL}/blog/un-billet`);
      assert.equal(hrefOf((await feed(t, '?locale=en')).entry?.[0]?.link ?? [], 'alternate'), `${APP_URL}/blog/hostile?locale=en`);
    } finally {
      await t.app.services.settings.put('default_locale', 'en', true);
    }
  });

  it('shows a scheduled post once its time has come', async () => {
    const post = await t.app.services.posts.findAny('tomorrow');
    assert.ok(post !== undefined);
    await t.app.services.posts.update(post, { published_at: daysFromNow(-1) });
    try {
      assert.equal(titles(await feed(t))[0], 'Scheduled for tomorrow');
    } finally {
      await t.app.services.posts.update(post, { published_at: daysFromNow(1) });
    }
  });
});

describe('GET /feed.xml with many or no posts', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ APP_URL });
  });
  after(() => t.close());

  it('is a valid feed with no entry, with a fixed update time so that its ETag stays', async () => {
    const root = await feed(t);
    assert.equal(root.entry, undefined);
    assert.equal(textOf(root.updated), '1970-01-01T00:00:00.000Z');
    const [first, second] = [await t.app.inject({ url: '/feed.xml' }), await t.app.inject({ url: '/feed.xml' })];
    assert.equal(first.headers.etag, second.headers.etag);
  });

  it(`carries the ${FEED_SIZE} newest posts and no more`, async () => {
    for (let day = FEED_SIZE + 1; day >= 1; day -= 1) await createPost(t.app, { title: `Post ${day}`, slug: `post-${day}`, published_at: daysFromNow(-day) });
    const shown = titles(await feed(t));
    assert.equal(shown.length, FEED_SIZE);
    assert.equal(shown[0], 'Post 1');
    assert.equal(shown.at(-1), `Post ${FEED_SIZE}`);
  });
});
