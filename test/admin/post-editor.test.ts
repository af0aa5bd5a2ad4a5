// The post editor (issue 27): a published post's "View post" link to its public address, the
// publication time typed and shown in UTC and stored as typed, the author chosen among the
// accounts that may write posts (the same rule through the API), the post's translations with
// "Add translation" prefilled, and the preview's parts: the public post's markup, the rules the
// browser renders with, and the browser libraries served by the service.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { BROWSER_RENDERING } from '../../src/modules/posts/markdown.js';
import { bearer, buildTestApp, createUser, type TestApp } from '../helpers.js';
import type { WebClient } from '../support/client.js';
import { auditRows, decode, fieldError, signedInAdmin, type Admin } from './support.js';
import { characters } from '../support/client.js';

const base = { excerpt: '', body: '', status: 'draft', published_at: '' };

describe('the post editor', () => {
  let t: TestApp;
  let admin: Admin;
  let client: WebClient;
  beforeEach(async () => {
    t = await buildTestApp();
    ({ admin, client } = await signedInAdmin(t, { name: 'Ada Editor' }));
  });
  afterEach(() => t.close());

  const edit = (id: number) => client.get(`/admin/posts/${id}/edit`);
  const save = (id: number, form: Record<string, string>) => client.submit(`/admin/posts/${id}/edit`, `/admin/posts/${id}`, form);
  const viewLink = (html: string): string | null => /<a class="button secondary view-post" href="([^"]*)"/.exec(html)?.[1] ?? null;
  const stored = async (id: number) => t.app.services.admin.findPost(id);
  const countPosts = async () => Number((await t.db.kysely.selectFrom('posts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  describe('"View post"', () => {
    it('links a published post to its public address, in its language', async () => {
      const en = await t.app.services.posts.create(admin.id, { title: 'Out in English', slug: 'out-now', status: 'published', published_at: '2024-01-02T03:04:00.000Z' });
      const fr = await t.app.services.posts.create(admin.id, { title: 'Sorti en français', slug: 'out-now', locale: 'fr', status: 'published', published_at: '2024-01-02T03:04:00.000Z' });
      assert.equal(decode(viewLink((await edit(en.id)).body) ?? ''), '/blog/out-now');
      const href = decode(viewLink((await edit(fr.id)).body) ?? '');
      assert.equal(href, '/blog/out-now?locale=fr');
      // The link leads to the post itself.
      const page = await t.app.inject({ method: 'GET', url: href });
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h1>Sorti en français<\/h1>/);
    });

    it('is absent for a draft, and a post scheduled for later says when instead', async () => {
      const draft = await t.app.services.posts.create(admin.id, { title: 'Still a draft' });
      assert.equal(viewLink((await edit(draft.id)).body), null);
      const later = await t.app.services.posts.create(admin.id, { title: 'Coming soon', status: 'published', published_at: '2999-06-01T08:00:00.000Z' });
      const html = (await edit(later.id)).body;
      assert.equal(viewLink(html), null);
      assert.match(html, /Scheduled for <time datetime="2999-06-01T08:00:00.000Z">[^<]*UTC<\/time>/);
    });
  });

  describe('the publication time', () => {
    it('says UTC in the label and beside the field, and shows a typed time back as typed, stored as that UTC time', async () => {
      const response = await client.submit('/admin/posts/new', '/admin/posts', { ...base, title: 'Round trip', locale: 'en', status: 'published', published_at: '2026-03-29T01:30' });
      assert.equal(response.statusCode, 303);
      const id = Number(/\/admin\/posts\/(\d+)\/edit/.exec(String(response.headers.location))?.[1]);
      assert.equal((await stored(id))?.published_at, '2026-03-29T01:30:00.000Z', 'typed in UTC, stored in UTC');
      const html = (await edit(id)).body;
      assert.match(html, /<label for="field-published_at">Publication time \(UTC\)<\/label>/);
      assert.match(html, /name="published_at" type="datetime-local" value="2026-03-29T01:30"/);
      assert.match(html, /<span class="zone-name" aria-hidden="true">UTC<\/span>/);
      const api = await t.app.inject({ method: 'GET', url: '/api/posts/round-trip', headers: { accept: 'application/json' } });
      assert.equal((api.json() as { data: { published_at: string } }).data.published_at, '2026-03-29T01:30:00.000Z');
    });

    it('keeps a time with seconds and milliseconds exact when the form is saved without touching it', async () => {
      const post = await t.app.services.posts.create(admin.id, { title: 'Precise', status: 'published', published_at: '2025-05-01T10:00:30.250Z' });
      const html = (await edit(post.id)).body;
      assert.match(html, /name="published_at" type="datetime-local" value="2025-05-01T10:00:30"/, 'the seconds are shown');
      assert.equal((await save(post.id, { ...base, title: 'Precise, retitled', slug: 'precise', locale: 'en', status: 'published', published_at: '2025-05-01T10:00:30' })).statusCode, 303);
      assert.equal((await stored(post.id))?.published_at, '2025-05-01T10:00:30.250Z');
      assert.deepEqual(JSON.parse((await auditRows(t))[0]?.details ?? '{}'), { fields: ['title'] }, 'the time did not change');
      await save(post.id, { ...base, title: 'Precise, retitled', locale: 'en', status: 'published', published_at: '2025-05-01T10:01' });
      assert.equal((await stored(post.id))?.published_at, '2025-05-01T10:01:00.000Z', 'a new time is stored as typed');
    });
  });

  describe('the author', () => {
    const options = (html: string) => [...html.matchAll(/<option value="(\d*)" data-name="[^"]*"( selected)?>([^<]*)<\/option>/g)].map((m) => ({ value: m[1], selected: m[2] !== undefined, label: decode(m[3] ?? '') }));

    it('offers the accounts that may write posts, the writer first chosen for a new post', async () => {
      const other = await createUser(t.app, { name: 'Grace Admin', admin: true });
      await createUser(t.app, { name: 'Plain Reader' });
      const list = options((await client.get('/admin/posts/new')).body);
      assert.deepEqual(list.map((option) => option.label), ['Ada Editor', 'Grace Admin'], 'administrators only, by name');
      assert.deepEqual(list.find((option) => option.selected)?.value, String(admin.id));
      assert.ok(list.some((option) => option.value === String(other.id)));
    });

    it('saves another administrator as the author and logs the change', async () => {
      const other = await createUser(t.app, { name: 'Grace Admin', admin: true });
      const post = await t.app.services.posts.create(admin.id, { title: 'Handed over' });
      assert.equal((await save(post.id, { ...base, title: 'Handed over', locale: 'en', author_id: String(other.id) })).statusCode, 303);
      assert.equal((await stored(post.id))?.author_id, other.id);
      assert.deepEqual(JSON.parse((await auditRows(t))[0]?.details ?? '{}'), { fields: ['author_id'] });
      const api = await t.app.inject({ method: 'GET', url: '/api/posts?status=draft', headers: bearer((await t.app.services.tokens.issue(admin.id, 'x', ['posts:read'])).plaintext) });
      assert.deepEqual((api.json() as { data: { author: unknown }[] }).data[0]?.author, { id: other.id, name: 'Grace Admin' });
    });

    const refused = [
      { name: 'an account that may not write posts', value: async () => String((await createUser(t.app, { name: 'Plain Reader' })).id) },
      { name: 'an account that does not exist', value: async () => '999999' },
      { name: 'something that is not an id', value: async () => 'abc' },
    ];
    for (const row of refused) {
      it(`refuses ${row.name} as the author: 422, inline error, nothing written`, async () => {
        const value = await row.value();
        const response = await client.submit('/admin/posts/new', '/admin/posts', { ...base, title: 'Nobody’s post', locale: 'en', author_id: value });
        assert.equal(response.statusCode, 422);
        assert.equal(fieldError(response.body, 'author_id'), 'The selected author cannot write posts.');
        assert.match(response.body, /<select id="field-author_id" name="author_id" aria-describedby="field-author_id-hint field-author_id-error" aria-invalid="true">/);
        assert.equal(await countPosts(), 0);
      });
    }

    it('keeps the author of a post whose author can no longer write posts, until another is chosen', async () => {
      const former = await createUser(t.app, { name: 'Former Admin', admin: true });
      const post = await t.app.services.posts.create(former.id, { title: 'Legacy' });
      await t.db.kysely.updateTable('users').set({ is_admin: 0 }).where('id', '=', former.id).execute();
      const list = options((await edit(post.id)).body);
      assert.deepEqual(list[0], { value: String(former.id), selected: true, label: 'Former Admin (can no longer write posts)' });
      assert.equal((await save(post.id, { ...base, title: 'Legacy, edited', locale: 'en', author_id: String(former.id) })).statusCode, 303);
      assert.equal((await stored(post.id))?.author_id, former.id);
      // Named afresh elsewhere, the same account is refused.
      const other = await t.app.services.posts.create(admin.id, { title: 'Another' });
      assert.equal((await save(other.id, { ...base, title: 'Another', locale: 'en', author_id: String(former.id) })).statusCode, 422);
      assert.equal((await stored(other.id))?.author_id, admin.id);
    });

    it('is the same rule through the API: another administrator is accepted, anyone else is a 422 on author_id', async () => {
      const other = await createUser(t.app, { name: 'Grace Admin', admin: true });
      const reader = await createUser(t.app, { name: 'Plain Reader' });
      const token = (await t.app.services.tokens.issue(admin.id, 'robot', ['posts:write'])).plaintext;
      const send = (method: 'POST' | 'PUT', url: string, payload: object) => t.app.inject({ method, url, payload, headers: bearer(token) });
      const created = await send('POST', '/api/posts', { title: 'By Grace', author_id: other.id });
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual((created.json() as { data: { author: unknown } }).data.author, { id: other.id, name: 'Grace Admin' });
      const byDefault = await send('POST', '/api/posts', { title: 'By the token' });
      assert.deepEqual((byDefault.json() as { data: { author: unknown } }).data.author, { id: admin.id, name: 'Ada Editor' });
      const refusedCreate = await send('POST', '/api/posts', { title: 'By a reader', author_id: reader.id });
      assert.equal(refusedCreate.statusCode, 422);
      assert.deepEqual(refusedCreate.json(), { message: 'The selected author cannot write posts.', errors: { author_id: ['The selected author cannot write posts.'] } });
      const refusedUpdate = await send('PUT', '/api/posts/by-grace', { author_id: reader.id });
      assert.equal(refusedUpdate.statusCode, 422);
      assert.equal((await t.app.services.posts.findAny('by-grace'))?.author_id, other.id, 'unchanged');
      assert.equal(await t.app.services.posts.findAny('by-a-reader'), undefined);
    });
  });

  describe('translations', () => {
    it('lists the other languages with "Add translation", which opens the form prefilled with the slug, the language and the text to translate', async () => {
      const post = await t.app.services.posts.create(admin.id, { title: 'Hello world', slug: 'hello', excerpt: 'A greeting', body: '# Hi\n\nThere', status: 'published' });
      const html = (await edit(post.id)).body;
      const add = `/admin/posts/new?translate=${post.id}&amp;locale=fr`;
      assert.match(html, new RegExp(`<a class="button secondary" href="${add.replace(/[?]/g, '\\?')}">Add translation<span class="visually-hidden"> \\(French\\)</span></a>`));
      const form = await client.get(decode(add));
      assert.equal(form.statusCode, 200);
      assert.match(form.body, /name="slug" type="text" value="hello"/);
      assert.match(form.body, /<option value="fr" selected>French<\/option>/);
      assert.match(form.body, /name="title" type="text" value="Hello world"/);
      assert.match(form.body, /<textarea id="field-body" name="body" rows="16"[^>]*># Hi\n\nThere<\/textarea>/);
      assert.match(form.body, /<option value="draft" selected>/, 'a translation starts as a draft');
      assert.match(form.body, new RegExp(`A translation of <a href="/admin/posts/${post.id}/edit" lang="en">Hello world</a> \\(English\\)`));
      assert.equal(await countPosts(), 1, 'nothing saved yet');

      const created = await client.submit(decode(add), '/admin/posts', { ...base, title: 'Bonjour le monde', slug: 'hello', body: '# Salut', locale: 'fr' });
      assert.equal(created.statusCode, 303);
      const translation = await t.app.services.posts.findAny('hello', 'fr');
      assert.equal(translation?.title, 'Bonjour le monde');
      const after = (await edit(post.id)).body;
      assert.match(after, new RegExp(`<a href="/admin/posts/${translation?.id}/edit" lang="fr">Bonjour le monde</a>`));
      assert.doesNotMatch(after, /Add translation/, 'no language left to add');
      const back = (await edit(translation?.id ?? 0)).body;
      assert.match(back, new RegExp(`<a href="/admin/posts/${post.id}/edit" lang="en">Hello world</a>`), 'the translation lists its original');
    });

    it('opens the existing translation instead of a second one, and answers 404 for a post that does not exist', async () => {
      const post = await t.app.services.posts.create(admin.id, { title: 'Twice', slug: 'twice' });
      const french = await t.app.services.posts.create(admin.id, { title: 'Deux fois', slug: 'twice', locale: 'fr' });
      const again = await client.get(`/admin/posts/new?translate=${post.id}&locale=fr`);
      assert.equal(again.statusCode, 303);
      assert.equal(again.headers.location, `/admin/posts/${french.id}/edit`);
      for (const id of ['424242', 'x', '-1']) assert.equal((await client.get(`/admin/posts/new?translate=${id}&locale=fr`)).statusCode, 404, id);
    });

    it('speaks French in a French panel', async () => {
      const post = await t.app.services.posts.create(admin.id, { title: 'Hello', status: 'published', published_at: '2024-01-01T00:00:00.000Z' });
      await client.get('/locale/fr');
      const html = (await edit(post.id)).body;
      assert.match(characters(html), />Voir l’article</);
      assert.match(html, /Ajouter une traduction<span class="visually-hidden"> \(Français\)/);
      assert.match(html, /<label for="field-published_at">Date de publication \(UTC\)<\/label>/);
    });
  });

  describe('the preview', () => {
    const previewSection = (html: string) => /<section class="card post-preview" id="preview"[^>]*>/.exec(html)?.[0] ?? '';

    it('is the public post’s markup, shown by the server after Preview and hidden for the script otherwise', async () => {
      const post = await t.app.services.posts.create(admin.id, { title: 'Shown', body: 'plain' });
      assert.match(previewSection((await edit(post.id)).body), / hidden>$/, 'left to the script on a plain view');
      const response = await client.submit(`/admin/posts/${post.id}/edit`, `/admin/posts/${post.id}`, { ...base, title: 'Shown & told', body: '*new*', locale: 'fr', author_id: String(admin.id), published_at: '2024-02-03T04:05', _action: 'preview' });
      assert.equal(response.statusCode, 200);
      assert.doesNotMatch(previewSection(response.body), / hidden>$/);
      const preview = response.body.slice(response.body.indexOf('id="preview"'));
      assert.match(preview, /<article class="blog-post" lang="fr" data-preview-article>/);
      assert.match(preview, /<p class="post-meta" lang="en" data-preview-meta><time datetime="2024-02-03T04:05:00.000Z">[^<]+<\/time><span class="post-author">by Ada Editor<\/span><\/p>/);
      assert.match(preview, /<h1 data-preview-title>Shown &amp; told<\/h1>/);
      assert.match(preview, /<div class="prose blog-body" data-preview-body><p><em>new<\/em><\/p>/);
    });

    it('hands the browser the server’s own markdown options and allowlist', async () => {
      const html = (await client.get('/admin/posts/new')).body;
      const attribute = /data-rendering="([^"]*)"/.exec(html)?.[1];
      assert.deepEqual(JSON.parse(decode(attribute ?? '{}')), JSON.parse(JSON.stringify(BROWSER_RENDERING)));
      assert.deepEqual(BROWSER_RENDERING.schemes, ['http', 'https', 'mailto']);
      for (const script of ['/vendor/markdown-it.js', '/vendor/dompurify.js', '/assets/post-editor.js']) assert.match(html, new RegExp(`<script src="${script}" defer></script>`));
    });

    it('serves the installed markdown-it and DOMPurify browser builds', async () => {
      const require = createRequire(import.meta.url);
      const files = {
        '/vendor/markdown-it.js': require.resolve('markdown-it').replace(/markdown-it\.cjs\.js$/, 'browser/markdown-it.umd.min.js'),
        '/vendor/dompurify.js': require.resolve('dompurify').replace(/purify\.cjs\.js$/, 'purify.min.js'),
      };
      for (const [url, file] of Object.entries(files)) {
        const response = await t.app.inject({ method: 'GET', url });
        assert.equal(response.statusCode, 200, url);
        assert.match(String(response.headers['content-type']), /^text\/javascript/);
        assert.equal(response.body, readFileSync(file, 'utf8'), url);
      }
    });
  });
});
