// Issue 28 §7, the edges of the posts API: a post's language is one the site offers (the same
// rule through POST and PUT /api/posts and the panel's editor, one owner in PostService); a
// page past the last answers an empty page whose links all agree with it; the locale in the
// links is in its usual case.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, buildTestApp, createUser, type TestApp } from '../helpers.js';
import { fieldError, signedInAdmin } from '../admin/support.js';
import type { WebClient } from '../support/client.js';
import { insertPost } from './support.js';

const NOT_OFFERED = { message: 'The selected locale is invalid.', errors: { locale: ['The selected locale is invalid.'] } };

type Links = { first: string; next: string | null; prev: string | null; last: string };
type Envelope = { data: { title: string }[]; meta: { current_page: number; last_page: number; per_page: number; total: number }; links: Links };

describe('a post is written in a language the site offers', () => {
  let t: TestApp;
  let editor: string;
  before(async () => {
    t = await buildTestApp();
    const admin = await createUser(t.app, { admin: true });
    editor = (await t.app.services.tokens.issue(admin.id, 'editor', ['posts:write'])).plaintext;
  });
  after(() => t.close());

  const send = (method: 'POST' | 'PUT', url: string, payload: object) => t.app.inject({ method, url, payload, headers: bearer(editor) });
  const stored = (slug: string) => t.db.kysely.selectFrom('posts').select(['locale', 'title']).where('slug', '=', slug).orderBy('locale').execute();

  it('refuses POST /api/posts in a language the locales setting does not offer (422 on locale), and stores nothing', async () => {
    for (const locale of ['de', 'pt-BR', 'zh-Hant']) {
      const response = await send('POST', '/api/posts', { title: 'Nope', slug: 'not-offered', locale });
      assert.equal(response.statusCode, 422, locale);
      assert.deepEqual(response.json(), NOT_OFFERED, locale);
    }
    assert.deepEqual(await stored('not-offered'), []);
    // The languages on offer are accepted, and the default (en) without a locale.
    for (const [slug, locale] of [['offered-en', 'en'], ['offered-fr', 'fr'], ['offered-default', undefined]] as const) {
      const response = await send('POST', '/api/posts', { title: 'Yes', slug, ...(locale === undefined ? {} : { locale }) });
      assert.equal(response.statusCode, 201, response.body);
    }
  });

  it('follows the setting at the next request, a region tag in any case included', async () => {
    await t.app.services.settings.put('locales', ['en', 'fr', 'pt-BR'], true);
    try {
      const response = await send('POST', '/api/posts', { title: 'Olá', slug: 'ola', locale: 'pt-br' });
      assert.equal(response.statusCode, 201, response.body);
      assert.deepEqual(await stored('ola'), [{ locale: 'pt-BR', title: 'Olá' }], 'stored in the case the list filters by');
    } finally {
      await t.app.services.settings.put('locales', ['en', 'fr'], true);
    }
  });

  it('refuses PUT /api/posts moving a post to a language not offered, and changes nothing', async () => {
    assert.equal((await send('POST', '/api/posts', { title: 'Stay', slug: 'stay', locale: 'en' })).statusCode, 201);
    const response = await send('PUT', '/api/posts/stay', { title: 'Moved', locale: 'de' });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(response.json(), NOT_OFFERED);
    assert.deepEqual(await stored('stay'), [{ locale: 'en', title: 'Stay' }]);
  });

  it('keeps a post stored in a language no longer offered editable in it through PUT, and lets it move to one offered', async () => {
    await insertPost(t.db, { slug: 'alt', title: 'Alt', locale: 'de', status: 'draft', published_at: null });
    const edited = await send('PUT', '/api/posts/alt', { title: 'Alt, bearbeitet' });
    assert.equal(edited.statusCode, 200, edited.body);
    const same = await send('PUT', '/api/posts/alt?locale=de', { title: 'Alt, wieder', locale: 'de' });
    assert.equal(same.statusCode, 200, 'sending its own language back is no move');
    assert.deepEqual(await stored('alt'), [{ locale: 'de', title: 'Alt, wieder' }]);
    const moved = await send('PUT', '/api/posts/alt', { locale: 'fr' });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual(await stored('alt'), [{ locale: 'fr', title: 'Alt, wieder' }]);
  });

  it('accepts any language tag, and only a tag, on a site without a usable locales setting', async () => {
    await t.db.kysely.deleteFrom('settings').where('key', '=', 'locales').execute(); // a database without it (the services never delete it)
    try {
      assert.equal((await send('POST', '/api/posts', { title: 'Hallo', slug: 'no-setting', locale: 'de' })).statusCode, 201);
      await assert.rejects(t.app.services.posts.create(null, { title: 'Bad', slug: 'bad-tag', locale: 'en_US!' }), { status: 422, errors: { locale: ['The selected locale is invalid.'] } });
    } finally {
      await t.app.services.settings.put('locales', ['en', 'fr'], true);
    }
  });

  describe('in the panel', () => {
    let client: WebClient;
    before(async () => {
      ({ client } = await signedInAdmin(t, { email: 'panel-edges@example.com' }));
    });

    const form = (fields: Record<string, string>) => ({ excerpt: '', body: 'b', status: 'draft', published_at: '', _action: 'save', ...fields });

    it('refuses a new post in a language not offered with the inline error on locale', async () => {
      const response = await client.submit('/admin/posts/new', '/admin/posts', form({ title: 'Neu', slug: 'panel-new', locale: 'de' }));
      assert.equal(response.statusCode, 422);
      assert.equal(fieldError(response.body, 'locale'), 'The selected locale is invalid.');
      assert.deepEqual(await stored('panel-new'), []);
    });

    it("offers a post's own language in its editor and keeps the post in it when saved", async () => {
      const post = await insertPost(t.db, { slug: 'panel-alt', title: 'Alt', locale: 'de', status: 'draft', published_at: null });
      const page = await client.get(`/admin/posts/${post.id}/edit`);
      const select = /<select id="field-locale"[\s\S]*?<\/select>/.exec(page.body)?.[0] ?? '';
      assert.deepEqual([...select.matchAll(/<option value="([^"]+)"( selected)?>([^<]*)</g)].map((m) => [m[1], m[2] !== undefined, m[3]]), [
        ['en', false, 'English'],
        ['fr', false, 'French'],
        ['de', true, 'German'],
      ]);
      const saved = await client.submit(`/admin/posts/${post.id}/edit`, `/admin/posts/${post.id}`, form({ title: 'Alt, bearbeitet', slug: 'panel-alt', locale: 'de' }));
      assert.equal(saved.statusCode, 303, saved.body.slice(0, 300));
      assert.deepEqual(await stored('panel-alt'), [{ locale: 'de', title: 'Alt, bearbeitet' }]);
      // Moving it to another language not offered is refused as a new post is.
      const moved = await client.submit(`/admin/posts/${post.id}/edit`, `/admin/posts/${post.id}`, form({ title: 'Alt', slug: 'panel-alt', locale: 'es' }));
      assert.equal(moved.statusCode, 422);
      assert.equal(fieldError(moved.body, 'locale'), 'The selected locale is invalid.');
    });
  });
});

describe('the pages of GET /api/posts and their links', () => {
  let t: TestApp;
  const APP_URL = 'http://blog.test';
  before(async () => {
    t = await buildTestApp({ APP_URL });
    const earlier = Date.now() - 3_600_000;
    for (let i = 0; i < 5; i += 1) await insertPost(t.db, { title: `Fr ${i}`, slug: `fr-${i}`, locale: 'fr', published_at: new Date(earlier + i * 1000).toISOString() });
  });
  after(() => t.close());

  const list = async (query: string) => {
    const response = await t.app.inject({ url: `/api/posts?${query}`, headers: { accept: 'application/json' } });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as Envelope;
  };
  /** Each link's page number (null when absent), and that every link keeps the same other parameters. */
  const pagesOf = (links: Links, others: Record<string, string>) =>
    Object.fromEntries(
      (['first', 'prev', 'next', 'last'] as const).map((name) => {
        const link = links[name];
        if (link === null) return [name, null];
        const url = new URL(link);
        assert.equal(`${url.origin}${url.pathname}`, `${APP_URL}/api/posts`, name);
        const params = Object.fromEntries(url.searchParams);
        const { page, ...rest } = params;
        assert.deepEqual(rest, others, `${name} keeps the other parameters`);
        return [name, Number(page)];
      }),
    );

  // 5 posts in French, 2 a page: pages 1..3.
  const cases: { name: string; page: number; items: number; links: { first: number; prev: number | null; next: number | null; last: number } }[] = [
    { name: 'the first page', page: 1, items: 2, links: { first: 1, prev: null, next: 2, last: 3 } },
    { name: 'a middle page', page: 2, items: 2, links: { first: 1, prev: 1, next: 3, last: 3 } },
    { name: 'the last page', page: 3, items: 1, links: { first: 1, prev: 2, next: null, last: 3 } },
    { name: 'the page just past the last', page: 4, items: 0, links: { first: 1, prev: 3, next: null, last: 3 } },
    { name: 'a page far past the last', page: 999, items: 0, links: { first: 1, prev: 998, next: null, last: 3 } },
  ];
  for (const each of cases) {
    it(`answers ${each.name} with current_page as asked and coherent first, prev, next and last`, async () => {
      const body = await list(`locale=fr&per_page=2&page=${each.page}`);
      assert.equal(body.data.length, each.items);
      assert.deepEqual(body.meta, { current_page: each.page, last_page: 3, per_page: 2, total: 5 });
      assert.deepEqual(pagesOf(body.links, { locale: 'fr', per_page: '2' }), each.links);
    });
  }

  it('answers a locale without posts with one empty last page, and a page past it the same way', async () => {
    const body = await list('locale=en&page=1');
    assert.deepEqual(body.meta, { current_page: 1, last_page: 1, per_page: 15, total: 0 });
    assert.deepEqual(pagesOf(body.links, { locale: 'en', per_page: '15' }), { first: 1, prev: null, next: null, last: 1 });
    const past = await list('locale=en&page=3');
    assert.deepEqual(past.data, []);
    assert.deepEqual(pagesOf(past.links, { locale: 'en', per_page: '15' }), { first: 1, prev: 2, next: null, last: 1 });
  });

  it('writes the locale asked for in any case in its usual case in every link (FR is fr)', async () => {
    for (const asked of ['FR', 'Fr', 'fr']) {
      const body = await list(`locale=${asked}&per_page=2&page=2`);
      assert.deepEqual(body.data.map((item) => item.title), ['Fr 2', 'Fr 1'], asked);
      assert.deepEqual(pagesOf(body.links, { locale: 'fr', per_page: '2' }), { first: 1, prev: 1, next: 3, last: 3 }, asked);
    }
  });

  it('documents what a page past the last answers, in the page parameter', async () => {
    const document = (await t.app.inject({ url: '/api/openapi.json' })).json() as { paths: Record<string, { get: { parameters: { name: string; in: string; description?: string }[] } }> };
    const page = document.paths['/api/posts']?.get.parameters.find((parameter) => parameter.name === 'page' && parameter.in === 'query');
    assert.match(page?.description ?? '', /past the last/);
  });
});
