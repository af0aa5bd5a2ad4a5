// GET /api/posts and GET /api/posts/{slug}: the public reads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Post } from '../../src/db/types.js';
import { bearer, buildTestApp, createUser, type TestApp } from '../helpers.js';
import { NOT_FOUND, insertPost } from './support.js';

type Item = { id: number; title: string; slug: string; excerpt: string; locale: string; published_at: string; author: { id: number; name: string } | null };
type Envelope = {
  data: Item[];
  meta: { current_page: number; last_page: number; per_page: number; total: number };
  links: { first: string; next: string | null; prev: string | null; last: string };
};

const HOUR = 3_600_000;

describe('GET /api/posts', () => {
  let t: TestApp;
  let author: Awaited<ReturnType<typeof createUser>>;
  let visibleEn: Post[] = [];
  const hidden: Post[] = [];
  let fr: Post[] = [];

  before(async () => {
    t = await buildTestApp();
    // The API's locale filter accepts the languages the `locales` setting offers.
    await t.app.services.settings.put('locales', ['en', 'fr', 'pt-BR', 'de'], true);
    author = await createUser(t.app, { name: 'Author Name' });
    const t0 = Date.now() - 30 * 24 * HOUR;
    const at = (hours: number) => new Date(t0 + hours * HOUR).toISOString();
    const en: Post[] = [];
    // Inserted out of date order, so that ids do not follow publication dates.
    for (const hours of [3, 19, 0, 7, 12, 1, 18, 4, 9, 15, 2, 6, 17, 8, 11, 14, 5, 10, 16, 13]) {
      en.push(await insertPost(t.db, { author_id: author.id, title: `At ${hours}h`, published_at: at(hours) }));
    }
    // Two posts published at the same instant: the higher id comes first.
    en.push(await insertPost(t.db, { author_id: author.id, title: 'Tie A', published_at: at(5.5) }));
    en.push(await insertPost(t.db, { author_id: author.id, title: 'Tie B', published_at: at(5.5) }));
    visibleEn = [...en].sort((a, b) => Date.parse(b.published_at ?? '') - Date.parse(a.published_at ?? '') || b.id - a.id);

    hidden.push(await insertPost(t.db, { title: 'Draft', status: 'draft', published_at: null }));
    hidden.push(await insertPost(t.db, { title: 'Dated draft', status: 'draft', published_at: at(50) }));
    hidden.push(await insertPost(t.db, { title: 'Archived', status: 'archived', published_at: at(51) }));
    hidden.push(await insertPost(t.db, { title: 'Future', status: 'published', published_at: new Date(Date.now() + 24 * HOUR).toISOString() }));
    hidden.push(await insertPost(t.db, { title: 'In a minute', status: 'published', published_at: new Date(Date.now() + 60_000).toISOString() }));

    for (const hours of [1, 3, 2]) fr.push(await insertPost(t.db, { locale: 'fr', title: `Fr ${hours}`, published_at: at(hours) }));
    fr = fr.sort((a, b) => Date.parse(b.published_at ?? '') - Date.parse(a.published_at ?? ''));
    await insertPost(t.db, { locale: 'pt-BR', title: 'Olá', published_at: at(1) });
  });
  after(() => t.close());

  const list = async (query = '', headers: Record<string, string> = {}) => {
    const response = await t.app.inject({ url: `/api/posts${query}`, headers: { accept: 'application/json', ...headers } });
    return { response, body: response.json() as Envelope };
  };

  it('answers the envelope {data, meta, links} with the defaults page 1, per_page 15, locale en', async () => {
    const { response, body } = await list();
    assert.equal(response.statusCode, 200);
    assert.deepEqual(Object.keys(body).sort(), ['data', 'links', 'meta']);
    assert.deepEqual(body.meta, { current_page: 1, last_page: 2, per_page: 15, total: 22 });
    assert.deepEqual(Object.keys(body.links).sort(), ['first', 'last', 'next', 'prev']);
    assert.equal(body.data.length, 15);
    assert.ok(body.data.every((item) => item.locale === 'en'));
  });

  it('lists items as {id, title, slug, excerpt, locale, published_at, author: {id, name}}, without the body', async () => {
    const { body } = await list();
    const item = body.data[0];
    assert.ok(item);
    const expected = visibleEn[0];
    assert.ok(expected);
    for (const key of ['id', 'title', 'slug', 'excerpt', 'locale', 'published_at', 'author']) assert.ok(key in item, key);
    for (const key of ['body', 'body_html', 'author_id', 'created_at', 'updated_at']) assert.ok(!(key in item), key);
    assert.equal(item.id, expected.id);
    assert.equal(item.title, expected.title);
    assert.equal(item.slug, expected.slug);
    assert.equal(item.excerpt, expected.excerpt);
    assert.equal(Date.parse(item.published_at), Date.parse(expected.published_at ?? ''));
    assert.deepEqual(item.author, { id: author.id, name: 'Author Name' });
  });

  it('orders newest first by published_at, then by id', async () => {
    const { body: one } = await list('?per_page=100');
    assert.deepEqual(one.data.map((item) => item.id), visibleEn.map((post) => post.id));
    const titles = one.data.map((item) => item.title);
    assert.ok(titles.indexOf('Tie B') < titles.indexOf('Tie A'));
  });

  it('splits the same order across pages', async () => {
    const { body: first } = await list('?per_page=5&page=1');
    const { body: second } = await list('?per_page=5&page=2');
    const { body: fifth } = await list('?per_page=5&page=5');
    assert.deepEqual(first.data.map((item) => item.id), visibleEn.slice(0, 5).map((post) => post.id));
    assert.deepEqual(second.data.map((item) => item.id), visibleEn.slice(5, 10).map((post) => post.id));
    assert.deepEqual(fifth.data.map((item) => item.id), visibleEn.slice(20).map((post) => post.id));
    assert.deepEqual(fifth.meta, { current_page: 5, last_page: 5, per_page: 5, total: 22 });
  });

  it('leaves out drafts, archived posts and posts dated in the future', async () => {
    const { body } = await list('?per_page=100');
    const ids = new Set(body.data.map((item) => item.id));
    for (const post of hidden) assert.ok(!ids.has(post.id), post.title);
    const explicit = await list('?status=published&per_page=100');
    assert.equal(explicit.response.statusCode, 200);
    assert.equal(explicit.body.meta.total, 22);
  });

  it('filters by locale', async () => {
    const french = await list('?locale=fr');
    assert.deepEqual(french.body.data.map((item) => item.id), fr.map((post) => post.id));
    assert.equal(french.body.meta.total, 3);
    const brazilian = await list('?locale=pt-BR');
    assert.equal(brazilian.body.meta.total, 1);
    assert.equal(brazilian.body.data[0]?.title, 'Olá');
  });

  it('answers an empty page for a locale with no posts', async () => {
    const { response, body } = await list('?locale=de');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(body.data, []);
    assert.deepEqual(body.meta, { current_page: 1, last_page: 1, per_page: 15, total: 0 });
    assert.equal(body.links.next, null);
    assert.equal(body.links.prev, null);
  });

  it('allows per_page up to 100', async () => {
    const { response, body } = await list('?per_page=100');
    assert.equal(response.statusCode, 200);
    assert.equal(body.meta.per_page, 100);
    assert.equal(body.data.length, 22);
    assert.equal(body.meta.last_page, 1);
  });

  it('answers 200 with empty data and the real meta for a page past the last', async () => {
    const { response, body } = await list('?page=7');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(body.data, []);
    assert.deepEqual(body.meta, { current_page: 7, last_page: 2, per_page: 15, total: 22 });
    assert.equal(body.links.next, null);
    assert.equal(new URL(body.links.last).searchParams.get('page'), '2');
    // As Laravel's paginator: prev is the page before this one (test/api/posts-edges.test.ts).
    assert.equal(new URL(body.links.prev ?? '').searchParams.get('page'), '6');
  });

  it('gives absolute links that keep the other parameters and set page; no prev on the first page', async () => {
    const { body } = await list('?locale=en&per_page=5&utm_source=mail');
    assert.equal(body.links.prev, null);
    const expected: Array<[keyof Envelope['links'], string]> = [['first', '1'], ['next', '2'], ['last', '5']];
    for (const [name, page] of expected) {
      const link = body.links[name];
      assert.ok(link !== null && link.startsWith(`${t.config.appUrl}/api/posts?`), String(link));
      const params = new URL(link).searchParams;
      assert.equal(params.get('page'), page, name);
      assert.equal(params.get('per_page'), '5');
      assert.equal(params.get('locale'), 'en');
      assert.equal(params.get('utm_source'), 'mail');
      assert.equal(params.getAll('page').length, 1);
    }
  });

  it('answers the same page asked with other parameters with links of its own', async () => {
    // The same page of the same locale: on SQLite it is kept in memory between the requests,
    // with its serialized body per query string (src/http/api/posts.ts).
    const plain = await list('?locale=en&per_page=5');
    const tracked = await list('?locale=en&per_page=5&utm_source=mail');
    const again = await list('?locale=en&per_page=5');
    assert.deepEqual(tracked.body.data, plain.body.data);
    assert.equal(new URL(tracked.body.links.last).searchParams.get('utm_source'), 'mail');
    assert.equal(new URL(again.body.links.last).searchParams.get('utm_source'), null);
    assert.equal(again.response.body, plain.response.body);
    assert.notEqual(tracked.response.headers.etag, plain.response.headers.etag);
  });

  it('has no next link on the last page, and a prev link to the page before', async () => {
    const { body } = await list('?per_page=5&page=5&locale=en');
    assert.equal(body.links.next, null);
    assert.equal(new URL(body.links.prev ?? '').searchParams.get('page'), '4');
    assert.equal(new URL(body.links.prev ?? '').searchParams.get('per_page'), '5');
  });

  it('links that are followed give the pages they name', async () => {
    const { body } = await list('?per_page=10');
    const next = new URL(body.links.next ?? '');
    const { body: second } = await list(next.search);
    assert.equal(second.meta.current_page, 2);
    assert.deepEqual(second.data.map((item) => item.id), visibleEn.slice(10, 20).map((post) => post.id));
  });

  const invalid: Array<[string, string, string]> = [
    ['page=0', 'page', 'The page field must be at least 1.'],
    ['page=-1', 'page', 'The page field must be at least 1.'],
    ['page=abc', 'page', 'The page field must be an integer.'],
    ['page=1.5', 'page', 'The page field must be an integer.'],
    ['page=', 'page', 'The page field must be an integer.'],
    ['page=1&page=2', 'page', 'The page field must be an integer.'],
    ['per_page=0', 'per_page', 'The per page field must be at least 1.'],
    ['per_page=101', 'per_page', 'The per page field must not be greater than 100.'],
    ['per_page=ten', 'per_page', 'The per page field must be an integer.'],
    ['per_page=2.5', 'per_page', 'The per page field must be an integer.'],
    ['locale=english!', 'locale', 'The locale field format is invalid.'],
    ['locale=e', 'locale', 'The locale field format is invalid.'],
    ['locale=EN-', 'locale', 'The locale field format is invalid.'],
    ['locale=en_US', 'locale', 'The locale field format is invalid.'],
    ['locale=', 'locale', 'The locale field format is invalid.'],
    ['status=draft', 'status', 'The selected status is invalid.'],
    ['status=archived', 'status', 'The selected status is invalid.'],
    ['status=deleted', 'status', 'The selected status is invalid.'],
  ];
  for (const [query, field, message] of invalid) {
    it(`answers 422 for ${query}, naming ${field}`, async () => {
      const { response, body } = await list(`?${query}`);
      assert.equal(response.statusCode, 422);
      assert.deepEqual(body, { message, errors: { [field]: [message] } });
    });
  }

  it('reports every failing parameter at once, message = the first', async () => {
    const { response, body } = await list('?page=0&per_page=500&locale=!!');
    assert.equal(response.statusCode, 422);
    assert.deepEqual(Object.keys(body).sort(), ['errors', 'message']);
    const errors = (body as unknown as { errors: Record<string, string[]> }).errors;
    assert.deepEqual(Object.keys(errors).sort(), ['locale', 'page', 'per_page']);
    assert.equal((body as unknown as { message: string }).message, Object.values(errors)[0]?.[0]);
  });

  describe('status other than published', () => {
    let adminReader: string;
    let adminWriterOnly: string;
    let userAll: string;
    before(async () => {
      const admin = await createUser(t.app, { admin: true });
      const user = await createUser(t.app);
      adminReader = (await t.app.services.tokens.issue(admin.id, 'reader', ['posts:read'])).plaintext;
      adminWriterOnly = (await t.app.services.tokens.issue(admin.id, 'writer', ['posts:write'])).plaintext;
      userAll = (await t.app.services.tokens.issue(user.id, 'all', ['*'])).plaintext;
    });

    it('lists drafts for an admin token with posts:read', async () => {
      const { response, body } = await list('?status=draft', bearer(adminReader));
      assert.equal(response.statusCode, 200);
      assert.deepEqual(body.data.map((item) => item.title).sort(), ['Dated draft', 'Draft']);
      assert.equal(body.meta.total, 2);
    });

    it('lists archived posts for an admin token with posts:read', async () => {
      const { body } = await list('?status=archived', bearer(adminReader));
      assert.deepEqual(body.data.map((item) => item.title), ['Archived']);
    });

    it('still lists only published posts by default for that token', async () => {
      const { body } = await list('?per_page=100', bearer(adminReader));
      assert.equal(body.meta.total, 22);
    });

    const refused: Array<[string, () => string]> = [
      ['a non-admin token with every ability', () => userAll],
      ['an admin token without posts:read', () => adminWriterOnly],
    ];
    for (const [name, token] of refused) {
      it(`answers 422 on status for ${name}`, async () => {
        const { response, body } = await list('?status=draft', bearer(token()));
        assert.equal(response.statusCode, 422);
        assert.deepEqual(body, { message: 'The selected status is invalid.', errors: { status: ['The selected status is invalid.'] } });
      });
    }
  });
});

describe('GET /api/posts/{slug}', () => {
  let t: TestApp;
  let author: Awaited<ReturnType<typeof createUser>>;
  before(async () => {
    t = await buildTestApp();
    author = await createUser(t.app, { name: 'Writer' });
  });
  after(() => t.close());

  const get = (slug: string) => t.app.inject({ url: `/api/posts/${slug}`, headers: { accept: 'application/json' } });

  it('answers {data: post} with the list fields, body (markdown) and body_html', async () => {
    const post = await insertPost(t.db, { author_id: author.id, slug: 'hello-world', title: 'Hello', excerpt: 'Short', body: '# Heading\n\nSome **bold** text.' });
    const response = await get('hello-world');
    assert.equal(response.statusCode, 200);
    const body = response.json() as { data: Item & { body: string; body_html: string } };
    assert.deepEqual(Object.keys(body), ['data']);
    const data = body.data;
    assert.equal(data.id, post.id);
    assert.equal(data.title, 'Hello');
    assert.equal(data.slug, 'hello-world');
    assert.equal(data.excerpt, 'Short');
    assert.equal(data.locale, 'en');
    assert.equal(Date.parse(data.published_at), Date.parse(post.published_at ?? ''));
    assert.deepEqual(data.author, { id: author.id, name: 'Writer' });
    assert.equal(data.body, '# Heading\n\nSome **bold** text.');
    assert.match(data.body_html, /<h1>Heading<\/h1>/);
    assert.match(data.body_html, /<strong>bold<\/strong>/);
  });

  it('answers author null when the author account is gone', async () => {
    const gone = await createUser(t.app);
    await insertPost(t.db, { author_id: gone.id, slug: 'orphan' });
    await t.db.kysely.deleteFrom('users').where('id', '=', gone.id).execute();
    const response = await get('orphan');
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().data.author, null);
  });

  it('sanitizes body_html: no script, no event handler, no javascript: URL survives', async () => {
    const markdown = [
      'Intro <script>alert("xss")</script>',
      '<img src="https://example.com/a.png" onerror="alert(1)">',
      '[click me](javascript:alert(1))',
      '<a href="javascript:alert(2)">link</a>',
      '<iframe src="https://evil.example"></iframe>',
      '<p onmouseover="alert(3)">hover</p>',
    ].join('\n\n');
    await insertPost(t.db, { slug: 'xss', body: markdown });
    const response = await get('xss');
    assert.equal(response.statusCode, 200);
    const { body, body_html: html } = response.json().data as { body: string; body_html: string };
    assert.equal(body, markdown, 'the markdown itself is returned as written');
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /alert\("xss"\)/);
    assert.doesNotMatch(html, /onerror|onmouseover/i);
    // No link to javascript: (a markdown link the renderer refuses stays as plain text).
    assert.doesNotMatch(html, /href\s*=\s*["']?\s*javascript:/i);
    assert.doesNotMatch(html, /alert\(2\)/);
    assert.doesNotMatch(html, /<iframe/i);
    assert.match(html, /Intro/);
    assert.match(html, /<img src="https:\/\/example.com\/a.png"/);
  });

  const missing: Array<[string, Parameters<typeof insertPost>[1] | null]> = [
    ['an unknown slug', null],
    ['a draft', { status: 'draft', published_at: null }],
    ['a draft with a past date', { status: 'draft' }],
    ['an archived post', { status: 'archived' }],
    ['a post dated in the future', { status: 'published', published_at: new Date(Date.now() + HOUR).toISOString() }],
  ];
  for (const [name, fields] of missing) {
    it(`answers 404 with the envelope for ${name}`, async () => {
      const slug = `missing-${name.replace(/\W+/g, '-')}`;
      if (fields !== null) await insertPost(t.db, { ...fields, slug });
      const response = await get(slug);
      assert.equal(response.statusCode, 404);
      assert.equal(response.body, NOT_FOUND);
    });
  }

  it('does not match a slug in another case', async () => {
    await insertPost(t.db, { slug: 'case-test' });
    assert.equal((await get('Case-Test')).statusCode, 404);
  });
});
