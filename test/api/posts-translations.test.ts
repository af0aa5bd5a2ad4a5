// A post's slug is unique per locale, not across the site: a translation shares its original's
// slug. Through the API (create, GET with and without `locale`, PUT and DELETE that refuse to
// guess between a slug's posts), the panel's editor and the demo seed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { seedDemo } from '../../src/cli/seed.js';
import { bearer, buildTestApp, createUser, type TestApp } from '../helpers.js';
import { auditRows, fieldError, signedInAdmin } from '../admin/support.js';
import type { WebClient } from '../support/client.js';
import { NOT_FOUND } from './support.js';

const TAKEN = { message: 'The slug has already been taken.', errors: { slug: ['The slug has already been taken.'] } };
const AMBIGUOUS_TEXT = 'The slug is used in several languages: give the locale parameter to choose the post.';
const AMBIGUOUS = { message: AMBIGUOUS_TEXT, errors: { locale: [AMBIGUOUS_TEXT] } };

type PostJson = { data: { id: number; title: string; slug: string; locale: string } };

describe('one slug in several locales, through the API', () => {
  let t: TestApp;
  let editor: string;
  before(async () => {
    t = await buildTestApp();
    const admin = await createUser(t.app, { admin: true });
    editor = (await t.app.services.tokens.issue(admin.id, 'editor', ['posts:write'])).plaintext;
    // A post's language is one the site offers: these tests write in four.
    await t.app.services.settings.put('locales', ['en', 'fr', 'de', 'es'], true);
  });
  after(() => t.close());

  const send = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url, payload, headers: { ...bearer(editor), ...headers } });
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { accept: 'application/json' } });
  const rows = (slug: string) => t.db.kysely.selectFrom('posts').select(['locale', 'title']).where('slug', '=', slug).orderBy('locale').execute();
  /** A post in English and its French translation, published, under one slug. */
  const pair = async (slug: string) => {
    assert.equal((await send('POST', '/api/posts', { title: `${slug} in English`, slug, locale: 'en', status: 'published' })).statusCode, 201);
    assert.equal((await send('POST', '/api/posts', { title: `${slug} en français`, slug, locale: 'fr', status: 'published' })).statusCode, 201);
  };

  it('creates a translation with its original slug, and refuses a third post with it in either locale (422, the same answer as before)', async () => {
    const english = await send('POST', '/api/posts', { title: 'Hello', slug: 'hello', locale: 'en', status: 'published' });
    assert.equal(english.statusCode, 201, english.body);
    const french = await send('POST', '/api/posts', { title: 'Bonjour', slug: 'hello', locale: 'fr', status: 'published' });
    assert.equal(french.statusCode, 201, french.body);
    assert.deepEqual([(english.json() as PostJson).data.slug, (french.json() as PostJson).data.slug], ['hello', 'hello']);
    for (const locale of ['en', 'fr']) {
      const third = await send('POST', '/api/posts', { title: 'Again', slug: 'hello', locale });
      assert.equal(third.statusCode, 422, locale);
      assert.deepEqual(third.json(), TAKEN);
    }
    // The slug made from a title follows the same rule.
    assert.equal((await send('POST', '/api/posts', { title: 'Hello', locale: 'en' })).statusCode, 422);
    assert.equal((await send('POST', '/api/posts', { title: 'Hello', locale: 'de' })).statusCode, 201);
    assert.deepEqual(await rows('hello'), [
      { locale: 'de', title: 'Hello' },
      { locale: 'en', title: 'Hello' },
      { locale: 'fr', title: 'Bonjour' },
    ]);
  });

  it('answers GET /api/posts/{slug} with the locale asked for, in any case, or 404 when that locale has none', async () => {
    await pair('greeting');
    const cases: Array<[string, number, string | null]> = [
      ['?locale=fr', 200, 'greeting en français'],
      ['?locale=FR', 200, 'greeting en français'],
      ['?locale=en', 200, 'greeting in English'],
      ['?locale=es', 404, null],
    ];
    for (const [query, status, title] of cases) {
      const response = await get(`/api/posts/greeting${query}`);
      assert.equal(response.statusCode, status, query);
      if (title === null) assert.equal(response.body, NOT_FOUND);
      else assert.equal((response.json() as PostJson).data.title, title, query);
    }
    const bad = await get('/api/posts/greeting?locale=not_a_tag');
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(Object.keys(bad.json().errors), ['locale']);
  });

  it("answers GET /api/posts/{slug} without a locale with the site's default language, else the oldest", async () => {
    // Created French first: the oldest is the French one, yet English is the default language.
    assert.equal((await send('POST', '/api/posts', { title: 'Nouvelles', slug: 'news', locale: 'fr', status: 'published' })).statusCode, 201);
    assert.equal((await send('POST', '/api/posts', { title: 'News', slug: 'news', locale: 'en', status: 'published' })).statusCode, 201);
    assert.equal((await get('/api/posts/news')).json().data.title, 'News');
    await t.app.services.settings.put('default_locale', 'fr', true);
    try {
      assert.equal((await get('/api/posts/news')).json().data.title, 'Nouvelles', 'the setting applies at the next request');
      // No post in the default language: the oldest of the slug's published posts.
      assert.equal((await send('POST', '/api/posts', { title: 'Hallo', slug: 'only-abroad', locale: 'de', status: 'published' })).statusCode, 201);
      assert.equal((await send('POST', '/api/posts', { title: 'Hello there', slug: 'only-abroad', locale: 'en', status: 'published' })).statusCode, 201);
      assert.equal((await get('/api/posts/only-abroad')).json().data.title, 'Hallo');
    } finally {
      await t.app.services.settings.put('default_locale', 'en', true);
    }
    // A translation that is a draft is not public, in either way of asking.
    assert.equal((await send('POST', '/api/posts', { title: 'Brouillon', slug: 'solo', locale: 'fr' })).statusCode, 201);
    assert.equal((await send('POST', '/api/posts', { title: 'Solo', slug: 'solo', locale: 'en', status: 'published' })).statusCode, 201);
    assert.equal((await get('/api/posts/solo?locale=fr')).statusCode, 404);
    assert.equal((await get('/api/posts/solo')).json().data.title, 'Solo');
  });

  for (const method of ['PUT', 'DELETE'] as const) {
    it(`refuses ${method} by a slug used in several languages without a locale (422 on locale), changing nothing`, async () => {
      const slug = `ambiguous-${method.toLowerCase()}`;
      await pair(slug);
      const before = await rows(slug);
      const response = await send(method, `/api/posts/${slug}`, method === 'PUT' ? { title: 'Which one?' } : undefined);
      assert.equal(response.statusCode, 422);
      assert.deepEqual(response.json(), AMBIGUOUS);
      assert.deepEqual(await rows(slug), before);
      const french = await send(method, `/api/posts/${slug}`, method === 'PUT' ? { title: 'Lequel ?' } : undefined, { 'accept-language': 'fr' });
      assert.equal(french.json().errors.locale[0], 'Ce slug est utilisé dans plusieurs langues : précisez le paramètre locale pour choisir l’article.');
      assert.deepEqual(await rows(slug), before);
    });
  }

  it('updates only the post of the locale given, in any case', async () => {
    await pair('edit-me');
    const response = await send('PUT', '/api/posts/edit-me?locale=FR', { title: 'Modifié' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal((response.json() as PostJson).data.locale, 'fr');
    assert.deepEqual(await rows('edit-me'), [
      { locale: 'en', title: 'edit-me in English' },
      { locale: 'fr', title: 'Modifié' },
    ]);
    assert.equal((await send('PUT', '/api/posts/edit-me?locale=de', { title: 'x' })).body, NOT_FOUND);
  });

  it('deletes only the post of the locale given; the slug is then one post again, addressed without a locale', async () => {
    await pair('delete-me');
    assert.equal((await send('DELETE', '/api/posts/delete-me?locale=fr')).statusCode, 204);
    assert.deepEqual(await rows('delete-me'), [{ locale: 'en', title: 'delete-me in English' }]);
    assert.equal((await send('PUT', '/api/posts/delete-me', { title: 'Alone' })).statusCode, 200);
    assert.equal((await send('DELETE', '/api/posts/delete-me')).statusCode, 204);
    assert.deepEqual(await rows('delete-me'), []);
  });

  it('refuses moving a post to a locale where its slug is taken, and allows it where it is free', async () => {
    await pair('move-me');
    const clash = await send('PUT', '/api/posts/move-me?locale=fr', { locale: 'en' });
    assert.equal(clash.statusCode, 422);
    assert.deepEqual(clash.json(), TAKEN);
    assert.equal((await send('PUT', '/api/posts/move-me?locale=fr', { locale: 'de' })).statusCode, 200);
    assert.deepEqual((await rows('move-me')).map((row) => row.locale), ['de', 'en']);
    // Renaming into a slug that only another locale uses is no clash either.
    assert.equal((await send('PUT', '/api/posts/move-me?locale=de', { slug: 'hello', locale: 'es' })).statusCode, 200);
    assert.equal((await send('PUT', '/api/posts/move-me', { slug: 'hello' })).statusCode, 422, 'hello is taken in English');
  });

  it('answers two writers racing for one slug in one locale with one 201 and one 422, and lets them both in two locales', async () => {
    const race = (locales: [string, string]) =>
      Promise.all(locales.map((locale, i) => send('POST', '/api/posts', { title: `Racer ${i}`, slug: `race-${locales.join('-')}`, locale })));
    const same = await race(['en', 'en']);
    assert.deepEqual(same.map((r) => r.statusCode).sort(), [201, 422]);
    assert.deepEqual(same.find((r) => r.statusCode === 422)?.json(), TAKEN);
    const two = await race(['en', 'fr']);
    assert.deepEqual(two.map((r) => r.statusCode), [201, 201]);
  });

  it('describes the locale parameter of the reads and writes by slug in the OpenAPI document', async () => {
    const doc = (await get('/docs/json')).json() as { paths: Record<string, Record<string, { parameters?: { name: string; in: string; description?: string }[] }>> };
    const path = doc.paths['/api/posts/{slug}'];
    assert.ok(path);
    for (const method of ['get', 'put', 'delete']) {
      const locale = path[method]?.parameters?.find((p) => p.name === 'locale' && p.in === 'query');
      assert.match(locale?.description ?? '', /language/, method);
    }
  });
});

describe('one slug in several locales, in the panel', () => {
  let t: TestApp;
  let client: WebClient;
  before(async () => {
    t = await buildTestApp();
    ({ client } = await signedInAdmin(t));
  });
  after(() => t.close());

  const form = (fields: Record<string, string>) => ({ excerpt: '', body: 'b', status: 'draft', published_at: '', _action: 'save', ...fields });
  const ids = async () => (await t.db.kysely.selectFrom('posts').select(['id', 'locale']).where('slug', '=', 'shared').orderBy('locale').execute()).map((row) => row.id);

  it('creates a translation with the same slug, refuses a third post with it, and lists both, each linked by its id', async () => {
    const english = await client.submit('/admin/posts/new', '/admin/posts', form({ title: 'Shared', slug: 'shared', locale: 'en' }));
    assert.equal(english.statusCode, 303);
    const french = await client.submit('/admin/posts/new', '/admin/posts', form({ title: 'Partagé', slug: 'shared', locale: 'fr' }));
    assert.equal(french.statusCode, 303, french.body.slice(0, 300));
    const third = await client.submit('/admin/posts/new', '/admin/posts', form({ title: 'Shared again', slug: 'shared', locale: 'en' }));
    assert.equal(third.statusCode, 422);
    assert.equal(fieldError(third.body, 'slug'), 'The slug has already been taken.');
    const [enId, frId] = await ids();
    assert.ok(enId !== undefined && frId !== undefined);
    assert.equal((await auditRows(t)).filter((line) => line.action === 'post.created').length, 2);

    const table = await client.get('/admin/posts?q=shared');
    const rows = [...table.body.matchAll(/<td><a href="\/admin\/posts\/(\d+)\/edit">([^<]*)<\/a><br><code class="muted small">shared<\/code>/g)];
    assert.deepEqual(rows.map((m) => Number(m[1])).sort((a, b) => a - b), [enId, frId].sort((a, b) => a - b));
    for (const id of [enId, frId]) {
      for (const action of ['edit', 'delete']) assert.match(table.body, new RegExp(`href="/admin/posts/${id}/${action}"`));
    }
  });

  it('refuses an edit that moves the translation to a locale where its slug is taken, and keeps it as it was', async () => {
    const [, frId] = await ids();
    const response = await client.submit(`/admin/posts/${frId}/edit`, `/admin/posts/${frId}`, form({ title: 'Partagé', slug: 'shared', locale: 'en' }));
    assert.equal(response.statusCode, 422);
    assert.equal(fieldError(response.body, 'slug'), 'The slug has already been taken.');
    assert.equal((await t.app.services.admin.findPost(Number(frId)))?.locale, 'fr');
    const saved = await client.submit(`/admin/posts/${frId}/edit`, `/admin/posts/${frId}`, form({ title: 'Partagé encore', slug: 'shared', locale: 'fr' }));
    assert.equal(saved.statusCode, 303, 'saving a translation under its own slug is no clash');
  });
});

describe('the demo seed', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('gives the French translations their English original slugs, and creates nothing twice', async () => {
    const first = await seedDemo(t.app.services);
    assert.equal(first.posts, 44);
    const shared = await t.db.kysely
      .selectFrom('posts')
      .select('slug')
      .groupBy('slug')
      .having((eb) => eb.fn.countAll(), '>', 1)
      .orderBy('slug')
      .execute();
    assert.equal(shared.length, 19, 'every French topic but the last translates an English one');
    const slug = 'getting-started-with-personal-access-tokens';
    assert.ok(shared.some((row) => row.slug === slug));
    assert.deepEqual((await t.app.services.posts.findPublishedVersion(slug))?.locales, ['en', 'fr']);
    const french = await t.app.inject({ url: `/api/posts/${slug}?locale=fr`, headers: { accept: 'application/json' } });
    assert.equal((french.json() as PostJson).data.title, 'Premiers pas avec les jetons d’accès');
    assert.ok(await t.app.services.posts.findAny('notes-de-version-edition-d-ete', 'fr'), 'the French-only post has a slug of its own');
    assert.equal((await seedDemo(t.app.services)).posts, 0);
  });
});
