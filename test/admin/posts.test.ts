// /admin/posts: the table (search, status and locale filters, sort, pages), the editor (slug from
// the title, markdown preview, dates in UTC), publish / unpublish as seen by GET /api/posts, and
// delete after a confirmation step; each action leaves an audit line.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { Post } from '../../src/db/types.js';
import { buildTestApp, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { auditRows, decode, fieldError, signedInAdmin, type Admin } from './support.js';
import { characters } from '../support/client.js';

/** The post titles in the table of a posts page, in order. */
const titlesOf = (html: string): string[] => [...html.matchAll(/<td><a href="\/admin\/posts\/\d+\/edit">([^<]*)<\/a>/g)].map((m) => decode(m[1] ?? ''));

type ApiList = { data: { slug: string; title: string }[]; meta: { total: number } };

const apiSlugs = async (t: TestApp, locale = 'en'): Promise<string[]> => {
  const response = await t.app.inject({ method: 'GET', url: `/api/posts?locale=${locale}`, headers: { accept: 'application/json' } });
  assert.equal(response.statusCode, 200);
  return (response.json() as ApiList).data.map((post) => post.slug);
};

describe('/admin/posts table', () => {
  let t: TestApp;
  let client: WebClient;
  before(async () => {
    t = await buildTestApp();
    let admin: Admin;
    ({ admin, client } = await signedInAdmin(t));
    const posts = t.app.services.posts;
    await posts.create(admin.id, { title: 'Alpha tokens explained', locale: 'en', status: 'published', excerpt: 'About bearer tokens' });
    await posts.create(admin.id, { title: 'beta draft notes', locale: 'en', status: 'draft' });
    await posts.create(admin.id, { title: 'Gamma en français', locale: 'fr', status: 'published' });
    await posts.create(admin.id, { title: 'Delta archived', locale: 'fr', status: 'archived', excerpt: '50% off_topic' });
    for (let i = 0; i < 16; i += 1) await posts.create(admin.id, { title: `Bulk ${String(i).padStart(2, '0')}`, locale: 'en', status: 'draft' });
  });
  after(() => t.close());

  const queries = [
    { name: 'searches titles whatever their case', url: '/admin/posts?q=ALPHA', expect: ['Alpha tokens explained'] },
    { name: 'searches excerpts', url: '/admin/posts?q=bearer', expect: ['Alpha tokens explained'] },
    { name: 'searches slugs', url: '/admin/posts?q=gamma-en', expect: ['Gamma en français'] },
    { name: 'treats % and _ as plain characters', url: `/admin/posts?q=${encodeURIComponent('50% off_')}`, expect: ['Delta archived'] },
    { name: 'filters by status', url: '/admin/posts?status=published&sort=title&dir=asc', expect: ['Alpha tokens explained', 'Gamma en français'] },
    { name: 'filters by locale', url: '/admin/posts?locale=fr&sort=title&dir=asc', expect: ['Delta archived', 'Gamma en français'] },
    { name: 'combines search, status and locale', url: '/admin/posts?q=a&status=archived&locale=fr', expect: ['Delta archived'] },
    { name: 'ignores an unknown status or locale filter', url: '/admin/posts?q=gamma&status=deleted&locale=xx', expect: ['Gamma en français'] },
    { name: 'sorts titles ignoring case', url: '/admin/posts?q=e&sort=title&dir=asc&status=draft', expect: ['beta draft notes'] },
  ];
  for (const row of queries) {
    it(row.name, async () => {
      const response = await client.get(row.url);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(titlesOf(response.body), row.expect);
    });
  }

  it('sorts by title both ways and pages 15 at a time, keeping the filters in the links', async () => {
    const first = await client.get('/admin/posts?status=draft&locale=en&sort=title&dir=desc');
    const titles = titlesOf(first.body);
    assert.equal(titles.length, 15);
    // Ignoring case, "bulk" comes after "beta"; a byte-wise sort would put "beta" first here.
    assert.equal(titles[0], 'Bulk 15');
    assert.equal(titles[14], 'Bulk 01');
    assert.match(first.body, /Page 1 of 2 · 17 in all/);
    assert.match(first.body, /href="\/admin\/posts\?status=draft&amp;locale=en&amp;sort=title&amp;dir=desc&amp;page=2" rel="next"/);
    const second = await client.get('/admin/posts?status=draft&locale=en&sort=title&dir=desc&page=2');
    assert.deepEqual(titlesOf(second.body), ['Bulk 00', 'beta draft notes']);
  });

  it('sorts by publication date with undated posts last both ways', async () => {
    for (const dir of ['asc', 'desc']) {
      const response = await client.get(`/admin/posts?q=a&sort=published_at&dir=${dir}&locale=fr`);
      assert.deepEqual(titlesOf(response.body), ['Gamma en français', 'Delta archived'], dir);
    }
  });
});

describe('/admin/posts editor and actions', () => {
  let t: TestApp;
  let admin: Admin;
  let client: WebClient;
  beforeEach(async () => {
    t = await buildTestApp();
    ({ admin, client } = await signedInAdmin(t));
  });
  afterEach(() => t.close());

  const findBySlug = async (slug: string): Promise<Post | undefined> => t.app.services.posts.findAny(slug);

  it('creates a draft with the slug made from the title, authored by the administrator, and logs it', async () => {
    const response = await client.submit('/admin/posts/new', '/admin/posts', {
      title: 'Élan vital: notes & more',
      slug: '',
      excerpt: 'Short',
      body: '# Hello\n\nWorld',
      locale: 'fr',
      status: 'draft',
      published_at: '',
      _action: 'save',
    });
    assert.equal(response.statusCode, 303);
    const post = await findBySlug('elan-vital-notes-more');
    assert.ok(post);
    assert.equal(response.headers.location, `/admin/posts/${post.id}/edit`);
    assert.deepEqual(
      { status: post.status, locale: post.locale, author: post.author_id, published_at: post.published_at, body: post.body },
      { status: 'draft', locale: 'fr', author: admin.id, published_at: null, body: '# Hello\n\nWorld' },
    );
    const [line] = await auditRows(t);
    assert.equal(line?.action, 'post.created');
    assert.equal(line?.subject_id, String(post.id));
    assert.equal(line?.subject_label, 'Élan vital: notes & more');
    const edit = await client.get(String(response.headers.location));
    assert.match(characters(edit.body), /role="status">The post “Élan vital: notes &amp; more” was created\.</);
  });

  it('publishes a new post at once: GET /api/posts serves it on the next request', async () => {
    assert.deepEqual(await apiSlugs(t), []);
    const response = await client.submit('/admin/posts/new', '/admin/posts', { title: 'Fresh news', locale: 'en', status: 'published', body: 'Out now' });
    assert.equal(response.statusCode, 303);
    assert.deepEqual(await apiSlugs(t), ['fresh-news']);
    const single = await t.app.inject({ method: 'GET', url: '/api/posts/fresh-news', headers: { accept: 'application/json' } });
    assert.equal(single.statusCode, 200);
    assert.equal((single.json() as { data: { body_html: string } }).data.body_html, '<p>Out now</p>\n');
  });

  it('keeps a post published with a future date out of GET /api/posts until then', async () => {
    await client.submit('/admin/posts/new', '/admin/posts', { title: 'Later news', locale: 'en', status: 'published', published_at: '2999-01-01T09:30' });
    const post = await findBySlug('later-news');
    assert.equal(post?.published_at, '2999-01-01T09:30:00.000Z', 'the form takes UTC');
    assert.deepEqual(await apiSlugs(t), []);
    const edit = await client.get(`/admin/posts/${post?.id}/edit`);
    assert.match(edit.body, /name="published_at" type="datetime-local" value="2999-01-01T09:30"/);
  });

  it('unpublishes and publishes again from the table, as GET /api/posts sees at once', async () => {
    const post = await t.app.services.posts.create(admin.id, { title: 'Toggle me', status: 'published', published_at: '2020-05-01T10:00:00.000Z' });
    assert.deepEqual(await apiSlugs(t), ['toggle-me']);
    await client.get('/admin/posts');
    const off = await client.post(`/admin/posts/${post.id}/unpublish`, {}, { headers: { referer: 'http://localhost:3000/admin/posts?status=published' } });
    assert.equal(off.statusCode, 303);
    assert.equal(off.headers.location, '/admin/posts?status=published', 'back to the table it was on');
    assert.deepEqual(await apiSlugs(t), []);
    assert.equal((await t.app.services.admin.findPost(post.id))?.status, 'draft');
    const on = await client.post(`/admin/posts/${post.id}/publish`, {}, { headers: { referer: 'https://elsewhere.example/x' } });
    assert.equal(on.headers.location, '/admin/posts', 'never back to another site');
    assert.deepEqual(await apiSlugs(t), ['toggle-me']);
    assert.equal((await t.app.services.admin.findPost(post.id))?.published_at, '2020-05-01T10:00:00.000Z', 'publishing again keeps the date');
    const actions = (await auditRows(t)).map((line) => line.action).slice(0, 2);
    assert.deepEqual(actions, ['post.published', 'post.unpublished']);
  });

  it('dates a first publication now', async () => {
    const post = await t.app.services.posts.create(admin.id, { title: 'Never published' });
    await client.get(`/admin/posts/${post.id}/edit`);
    const before = Date.now();
    await client.post(`/admin/posts/${post.id}/publish`);
    const published = Date.parse((await t.app.services.admin.findPost(post.id))?.published_at ?? '');
    assert.ok(published >= before - 1000 && published <= Date.now(), 'published_at is the time of publishing');
    assert.deepEqual(await apiSlugs(t), ['never-published']);
  });

  it('edits every field and logs the fields that changed', async () => {
    const post = await t.app.services.posts.create(admin.id, { title: 'Before', excerpt: 'e', body: 'b', locale: 'en' });
    const response = await client.submit(`/admin/posts/${post.id}/edit`, `/admin/posts/${post.id}`, {
      title: 'After',
      slug: 'after-all',
      excerpt: 'e',
      body: 'new body',
      locale: 'fr',
      status: 'archived',
      published_at: '2024-02-03T04:05',
    });
    assert.equal(response.statusCode, 303);
    const updated = await t.app.services.admin.findPost(post.id);
    assert.deepEqual(
      { title: updated?.title, slug: updated?.slug, body: updated?.body, locale: updated?.locale, status: updated?.status, published_at: updated?.published_at },
      { title: 'After', slug: 'after-all', body: 'new body', locale: 'fr', status: 'archived', published_at: '2024-02-03T04:05:00.000Z' },
    );
    const [line] = await auditRows(t);
    assert.equal(line?.action, 'post.updated');
    assert.deepEqual(JSON.parse(line?.details ?? '{}'), { fields: ['title', 'slug', 'body', 'locale', 'status', 'published_at'] });
  });

  it('makes the slug from the new title when the slug field is emptied', async () => {
    const post = await t.app.services.posts.create(admin.id, { title: 'First title' });
    await client.submit(`/admin/posts/${post.id}/edit`, `/admin/posts/${post.id}`, { title: 'Second title', slug: '', locale: 'en', status: 'draft' });
    assert.equal((await t.app.services.admin.findPost(post.id))?.slug, 'second-title');
  });

  it('renders a markdown preview of the unsaved body, sanitized, and saves nothing', async () => {
    const response = await client.submit('/admin/posts/new', '/admin/posts', {
      title: 'Previewed',
      body: '**bold** <script>alert(1)</script> [x](javascript:alert(1))',
      locale: 'en',
      status: 'published',
      _action: 'preview',
    });
    assert.equal(response.statusCode, 200);
    assert.match(response.body, /<div class="prose blog-body" data-preview-body><p><strong>bold<\/strong>/);
    const preview = response.body.slice(response.body.indexOf('data-preview-body'));
    assert.ok(!preview.includes('<script>alert(1)</script>'), 'no script in the preview');
    assert.doesNotMatch(preview, /href\s*=\s*["']?\s*javascript:/i, 'no javascript: link in the preview');
    assert.match(response.body, /<textarea id="field-body" name="body" rows="16"[^>]*>\*\*bold\*\* &lt;script&gt;/, 'the body stays in the form');
    assert.equal(await findBySlug('previewed'), undefined);
    assert.equal((await auditRows(t)).filter((line) => line.action.startsWith('post.')).length, 0);
  });

  it('previews an existing post without changing it', async () => {
    const post = await t.app.services.posts.create(admin.id, { title: 'Stable', body: 'old' });
    const response = await client.submit(`/admin/posts/${post.id}/edit`, `/admin/posts/${post.id}`, { title: 'Stable', body: '_new_', locale: 'en', status: 'draft', _action: 'preview' });
    assert.equal(response.statusCode, 200);
    assert.match(response.body, /<em>new<\/em>/);
    assert.equal((await t.app.services.admin.findPost(post.id))?.body, 'old');
  });

  const invalid = [
    { name: 'no title', form: { title: '', locale: 'en', status: 'draft' }, field: 'title', message: 'The title field is required.' },
    { name: 'a title over 255 characters', form: { title: 't'.repeat(256), locale: 'en', status: 'draft' }, field: 'title', message: 'The title field must not be greater than 255 characters.' },
    { name: 'a slug with spaces', form: { title: 'Fine', slug: 'not a slug', locale: 'en', status: 'draft' }, field: 'slug', message: 'The slug field format is invalid.' },
    { name: 'a slug already taken', form: { title: 'Fine', slug: 'taken-slug', locale: 'en', status: 'draft' }, field: 'slug', message: 'The slug has already been taken.' },
    { name: 'a title with no letters for the slug', form: { title: '!!!', locale: 'en', status: 'draft' }, field: 'slug', message: 'The slug field is required when the title has no letters or digits.' },
    { name: 'an unknown status', form: { title: 'Fine', locale: 'en', status: 'deleted' }, field: 'status', message: 'The selected status is invalid.' },
    { name: 'an unknown locale', form: { title: 'Fine', locale: 'de', status: 'draft' }, field: 'locale', message: 'The selected locale is invalid.' },
    { name: 'a date that is not one', form: { title: 'Fine', locale: 'en', status: 'draft', published_at: 'tomorrow' }, field: 'published_at', message: 'The published at field must be a valid date.' },
    { name: 'an impossible date', form: { title: 'Fine', locale: 'en', status: 'draft', published_at: '2024-13-45T99:00' }, field: 'published_at', message: 'The published at field must be a valid date.' },
    { name: 'an excerpt over 1000 characters', form: { title: 'Fine', excerpt: 'x'.repeat(1001), locale: 'en', status: 'draft' }, field: 'excerpt', message: 'The excerpt field must not be greater than 1000 characters.' },
  ];
  for (const row of invalid) {
    it(`refuses a post with ${row.name}: 422, inline error, values kept, nothing written`, async () => {
      await t.app.services.posts.create(admin.id, { title: 'Taken slug' });
      const response = await client.submit('/admin/posts/new', '/admin/posts', row.form);
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, row.field), row.message);
      if (row.form.title.length < 100) assert.match(response.body, new RegExp(`name="title" type="text" value="${row.form.title}"`));
      const count = await t.db.kysely.selectFrom('posts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 1);
      assert.equal((await auditRows(t)).filter((line) => line.action === 'post.created').length, 0);
    });
  }

  it('refuses an edit to a slug another post has, and keeps the post as it was', async () => {
    await t.app.services.posts.create(admin.id, { title: 'Other', slug: 'other' });
    const post = await t.app.services.posts.create(admin.id, { title: 'Mine', slug: 'mine' });
    const response = await client.submit(`/admin/posts/${post.id}/edit`, `/admin/posts/${post.id}`, { title: 'Mine', slug: 'other', locale: 'en', status: 'draft' });
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'slug'), 'The slug has already been taken.');
    assert.equal((await t.app.services.admin.findPost(post.id))?.slug, 'mine');
  });

  it('deletes a post after a confirmation page, and it leaves GET /api/posts', async () => {
    const post = await t.app.services.posts.create(admin.id, { title: 'Short lived', status: 'published' });
    const confirm = await client.get(`/admin/posts/${post.id}/delete`);
    assert.equal(confirm.statusCode, 200);
    assert.match(characters(confirm.body), /The post “Short lived” will be deleted/);
    assert.ok(await t.app.services.admin.findPost(post.id), 'the confirmation page deletes nothing');
    const response = await client.post(`/admin/posts/${post.id}/delete`);
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/admin/posts');
    assert.equal(await t.app.services.admin.findPost(post.id), undefined);
    assert.deepEqual(await apiSlugs(t), []);
    const [line] = await auditRows(t);
    assert.deepEqual([line?.action, line?.subject_label], ['post.deleted', 'Short lived']);
  });

  it('answers 404 for a post that does not exist', async () => {
    for (const url of ['/admin/posts/424242/edit', '/admin/posts/424242/delete', '/admin/posts/x/edit']) assert.equal((await client.get(url)).statusCode, 404, url);
    await client.get('/admin/posts');
    assert.equal((await client.post('/admin/posts/424242/publish')).statusCode, 404);
  });
});

describe('/admin forms given a body that is not an object', () => {
  let t: TestApp;
  let client: WebClient;
  before(async () => {
    t = await buildTestApp();
    ({ client } = await signedInAdmin(t));
  });
  after(() => t.close());

  for (const payload of ['[1]', '"a string"', '[[[]]]', '42']) {
    it(`answers ${payload} posted as JSON to the post editor with 422 and creates nothing`, async () => {
      await client.get('/admin/posts/new');
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/posts',
        payload,
        headers: { 'content-type': 'application/json', 'x-csrf-token': client.csrf ?? '', cookie: `tessera_session=${client.cookies.get('tessera_session') ?? ''}` },
      });
      assert.equal(response.statusCode, 422, response.body.slice(0, 200));
      const count = await t.db.kysely.selectFrom('posts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 0);
    });
  }
});
