// The write API of posts: admins holding a token with posts:write create, update and delete.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, buildTestApp, createUser, issueToken, type TestApp } from '../helpers.js';
import { NOT_FOUND, UNAUTHENTICATED, UNAUTHORIZED, insertPost } from './support.js';

describe('POST, PUT, DELETE /api/posts', () => {
  let t: TestApp;
  let adminId: number;
  let editor: string;
  let adminFull: string;
  let adminReader: string;
  let userWriter: string;

  before(async () => {
    t = await buildTestApp();
    const admin = await createUser(t.app, { name: 'Editor', admin: true });
    adminId = admin.id;
    const user = await createUser(t.app);
    editor = (await t.app.services.tokens.issue(admin.id, 'editor', ['posts:write'])).plaintext;
    adminFull = await issueToken(t.app, admin.email, admin.plainPassword);
    adminReader = (await t.app.services.tokens.issue(admin.id, 'reader', ['posts:read'])).plaintext;
    userWriter = (await t.app.services.tokens.issue(user.id, 'writer', ['posts:write'])).plaintext;
  });
  after(() => t.close());

  const send = (method: 'POST' | 'PUT' | 'DELETE', url: string, token: string | null, payload?: object) =>
    t.app.inject({ method, url, payload, headers: token === null ? { accept: 'application/json' } : bearer(token) });
  const row = (slug: string) => t.db.kysely.selectFrom('posts').selectAll().where('slug', '=', slug).executeTakeFirst();

  it('creates a post: 201 {data: post}, slug from the title, a draft by default, authored by the caller', async () => {
    const response = await send('POST', '/api/posts', editor, { title: 'Hello, World!', body: '# Hi\n\n<script>x()</script>', excerpt: 'First' });
    assert.equal(response.statusCode, 201);
    const data = response.json().data;
    assert.deepEqual(Object.keys(response.json()), ['data']);
    assert.equal(data.slug, 'hello-world');
    assert.equal(data.title, 'Hello, World!');
    assert.equal(data.excerpt, 'First');
    assert.equal(data.locale, 'en');
    assert.equal(data.published_at, null);
    assert.deepEqual(data.author, { id: adminId, name: 'Editor' });
    assert.match(data.body_html, /<h1>Hi<\/h1>/);
    assert.doesNotMatch(data.body_html, /<script/);
    const stored = await row('hello-world');
    assert.equal(stored?.status, 'draft');
    assert.equal(stored?.author_id, adminId);
    assert.equal((await t.app.inject({ url: '/api/posts/hello-world' })).statusCode, 404, 'a draft is not public');
  });

  it('creates with an explicit slug, locale and publication; a published post without a date is public at once', async () => {
    const response = await send('POST', '/api/posts', editor, { title: 'Bonjour', slug: 'bonjour-monde', locale: 'fr', status: 'published' });
    assert.equal(response.statusCode, 201);
    assert.equal(response.json().data.slug, 'bonjour-monde');
    assert.notEqual(response.json().data.published_at, null);
    const pub = await t.app.inject({ url: '/api/posts/bonjour-monde' });
    assert.equal(pub.statusCode, 200);
    const list = await t.app.inject({ url: '/api/posts?locale=fr' });
    assert.ok(list.json().data.some((item: { slug: string }) => item.slug === 'bonjour-monde'));
  });

  it('keeps a given published_at, normalized to UTC', async () => {
    const response = await send('POST', '/api/posts', adminFull, { title: 'Dated', status: 'published', published_at: '2024-05-01T12:00:00+02:00' });
    assert.equal(response.statusCode, 201);
    assert.equal(Date.parse(response.json().data.published_at), Date.parse('2024-05-01T10:00:00Z'));
  });

  it('also lets an admin token with every ability (from POST /api/tokens) write', async () => {
    const response = await send('POST', '/api/posts', adminFull, { title: 'Full Token Post' });
    assert.equal(response.statusCode, 201);
    assert.equal(response.json().data.slug, 'full-token-post');
  });

  it('answers 422 "The slug has already been taken." for a title whose slug exists, and for a taken slug', async () => {
    await send('POST', '/api/posts', editor, { title: 'Duplicate Me' });
    const byTitle = await send('POST', '/api/posts', editor, { title: 'Duplicate me!' });
    const bySlug = await send('POST', '/api/posts', editor, { title: 'Other', slug: 'duplicate-me' });
    for (const response of [byTitle, bySlug]) {
      assert.equal(response.statusCode, 422);
      assert.deepEqual(response.json(), { message: 'The slug has already been taken.', errors: { slug: ['The slug has already been taken.'] } });
    }
    const count = await t.db.kysely.selectFrom('posts').select('id').where('slug', '=', 'duplicate-me').execute();
    assert.equal(count.length, 1);
  });

  const invalid: Array<[string, object, string, string]> = [
    ['a missing title', { body: 'x' }, 'title', 'The title field is required.'],
    ['an empty title', { title: '' }, 'title', 'The title field is required.'],
    ['a title over 255 characters', { title: 't'.repeat(256) }, 'title', 'The title field must not be greater than 255 characters.'],
    ['a slug with spaces and capitals', { title: 'A', slug: 'Bad Slug' }, 'slug', 'The slug field format is invalid.'],
    ['an unknown status', { title: 'A', status: 'hidden' }, 'status', 'The selected status is invalid.'],
    ['an invalid locale', { title: 'A', locale: 'English' }, 'locale', 'The locale field format is invalid.'],
    ['an invalid date', { title: 'A', published_at: 'yesterday' }, 'published_at', 'The published at field must be a valid date.'],
  ];
  for (const [name, payload, field, message] of invalid) {
    it(`answers 422 for ${name}`, async () => {
      const response = await send('POST', '/api/posts', editor, payload);
      assert.equal(response.statusCode, 422);
      assert.equal(response.json().message, message);
      assert.deepEqual(response.json().errors[field], [message]);
    });
  }

  it('answers 422 on slug for a title with no letters or digits', async () => {
    const response = await send('POST', '/api/posts', editor, { title: '!!!' });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(Object.keys(response.json().errors), ['slug']);
  });

  it('updates a post: 200 {data: post} with the fields sent, the others unchanged', async () => {
    await insertPost(t.db, { slug: 'to-update', title: 'Before', excerpt: 'Keep me', status: 'draft', published_at: null });
    const response = await send('PUT', '/api/posts/to-update', editor, { title: 'After' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().data.title, 'After');
    assert.equal(response.json().data.slug, 'to-update');
    assert.equal(response.json().data.excerpt, 'Keep me');
    assert.equal((await row('to-update'))?.title, 'After');
  });

  it('publishes a draft through an update, which then becomes public', async () => {
    await insertPost(t.db, { slug: 'publish-me', status: 'draft', published_at: null });
    const response = await send('PUT', '/api/posts/publish-me', editor, { status: 'published' });
    assert.equal(response.statusCode, 200);
    assert.notEqual(response.json().data.published_at, null);
    assert.equal((await t.app.inject({ url: '/api/posts/publish-me' })).statusCode, 200);
  });

  it('renames the slug, and refuses a slug another post has with 422', async () => {
    await insertPost(t.db, { slug: 'rename-me' });
    await insertPost(t.db, { slug: 'occupied' });
    const renamed = await send('PUT', '/api/posts/rename-me', editor, { slug: 'renamed' });
    assert.equal(renamed.statusCode, 200);
    assert.equal(await row('rename-me'), undefined);
    assert.ok(await row('renamed'));
    const clash = await send('PUT', '/api/posts/renamed', editor, { slug: 'occupied' });
    assert.equal(clash.statusCode, 422);
    assert.deepEqual(clash.json().errors, { slug: ['The slug has already been taken.'] });
    const same = await send('PUT', '/api/posts/renamed', editor, { slug: 'renamed', title: 'Same slug is fine' });
    assert.equal(same.statusCode, 200);
  });

  it('deletes a post: 204, then it is gone', async () => {
    await insertPost(t.db, { slug: 'delete-me' });
    const response = await send('DELETE', '/api/posts/delete-me', editor);
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    assert.equal(await row('delete-me'), undefined);
    assert.equal((await t.app.inject({ url: '/api/posts/delete-me' })).body, NOT_FOUND);
  });

  for (const method of ['PUT', 'DELETE'] as const) {
    it(`answers 404 to ${method} on an unknown slug`, async () => {
      const response = await send(method, '/api/posts/no-such-post', editor, method === 'PUT' ? { title: 'x' } : undefined);
      assert.equal(response.statusCode, 404);
      assert.equal(response.body, NOT_FOUND);
    });
  }

  const denied: Array<[string, () => string | null, number, string]> = [
    ['a non-admin token with posts:write', () => userWriter, 403, UNAUTHORIZED],
    ['an admin token with only posts:read', () => adminReader, 403, UNAUTHORIZED],
    ['no token', () => null, 401, UNAUTHENTICATED],
  ];
  for (const [name, token, status, body] of denied) {
    for (const [method, url, payload] of [
      ['POST', '/api/posts', { title: 'Denied Post' }],
      ['PUT', '/api/posts/guarded', { title: 'Changed' }],
      ['DELETE', '/api/posts/guarded', undefined],
    ] as const) {
      it(`answers ${status} to ${method} ${url} for ${name}, and changes nothing`, async () => {
        if ((await row('guarded')) === undefined) await insertPost(t.db, { slug: 'guarded', title: 'Guarded' });
        const response = await send(method, url, token(), payload);
        assert.equal(response.statusCode, status);
        assert.equal(response.body, body);
        assert.equal((await row('guarded'))?.title, 'Guarded');
        assert.equal(await row('denied-post'), undefined);
      });
    }
  }
});
