// Object-level authorization. Bob's token, aimed at Alice's ids, slugs, email and token ids in
// every place (path, query, body) of every route that needs a token, never reads or changes
// Alice's account or tokens. A non-admin never writes posts: every write route of the API with
// '*', posts:write and posts:read+posts:write tokens, and every write action of the panel with
// a logged-in site session — 403 (or the panel's login), nothing changed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createUser, issueToken, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { login } from '../web/support.js';
import {
  UNAUTHORIZED,
  buildAppWithRoutes,
  diffSnapshots,
  figures,
  fillPath,
  isApiRoute,
  isUnsafe,
  needsToken,
  snapshotDatabase,
  type RouteInfo,
} from './support.js';

type User = Awaited<ReturnType<typeof createUser>>;

describe('object-level authorization', () => {
  let t: TestApp;
  let routes: RouteInfo[];
  let alice: User;
  let bob: User;
  let admin: User;
  let aliceToken: string;
  let aliceTokenId: number;
  let draftSlug: string;
  let draftId: number;
  let tried = 0;

  const aliceRow = async () => {
    const user = await t.db.kysely.selectFrom('users').selectAll().where('id', '=', alice.id).executeTakeFirstOrThrow();
    const tokens = await t.db.kysely.selectFrom('personal_access_tokens').select(['id', 'token', 'abilities', 'name']).where('user_id', '=', alice.id).orderBy('id').execute();
    return JSON.stringify({ user, tokens });
  };

  before(async () => {
    ({ t, routes } = await buildAppWithRoutes());
    alice = await createUser(t.app, { name: 'Alice Secret', email: 'alice-secret@example.com', password: 'alice passphrase 1' });
    bob = await createUser(t.app, { name: 'Bob', password: 'bob passphrase 2' });
    admin = await createUser(t.app, { name: 'Admin', admin: true });
    aliceToken = await issueToken(t.app, alice.email, alice.plainPassword, 'alice-phone');
    aliceTokenId = Number(aliceToken.split('|')[0]);
    await t.app.services.tokens.authenticate(t.app.services.tokens.parse(aliceToken));
    const now = new Date().toISOString();
    const draft = await t.db.kysely
      .insertInto('posts')
      .values({ author_id: admin.id, title: 'Draft by admin', slug: 'draft-by-admin', excerpt: 'secret draft', body: 'secret', locale: 'en', status: 'draft', published_at: null, created_at: now, updated_at: now })
      .returning(['id', 'slug'])
      .executeTakeFirstOrThrow();
    draftSlug = draft.slug;
    draftId = draft.id;
    await t.db.kysely
      .insertInto('posts')
      .values({ author_id: admin.id, title: 'Published', slug: 'published-post', excerpt: '', body: '', locale: 'en', status: 'published', published_at: now, created_at: now, updated_at: now })
      .execute();
  });
  after(() => t.close());

  it("never lets Bob's token read or change Alice's account or tokens, whatever ids it names", async () => {
    const before = await aliceRow();
    const targets = routes.filter(needsToken);
    const ids = [String(alice.id), String(aliceTokenId), alice.email, draftSlug];
    const leaks: string[] = [];
    for (const route of targets) {
      for (const id of ids) {
        // A fresh token each time: the revocation routes take Bob's own tokens away.
        const bobToken = (await t.app.services.tokens.issue(bob.id, 'bob', ['*'])).plaintext;
        const query = `id=${encodeURIComponent(id)}&user_id=${alice.id}&token_id=${aliceTokenId}&email=${encodeURIComponent(alice.email)}`;
        const hasBody = ['POST', 'PUT', 'PATCH'].includes(route.method);
        const response = await t.app.inject({
          method: route.method as 'GET',
          url: `${fillPath(route.url, () => id)}?${query}`,
          headers: bearer(bobToken),
          ...(hasBody
            ? {
                payload: {
                  id: alice.id,
                  user_id: alice.id,
                  token_id: aliceTokenId,
                  name: 'Renamed by Bob',
                  current_password: alice.plainPassword,
                  password: 'taken over 12345',
                  password_confirmation: 'taken over 12345',
                  title: 'Bob was here',
                },
              }
            : {}),
        });
        tried += 1;
        if (response.body.includes(alice.email) || response.body.includes(alice.name) || response.body.includes('secret draft')) {
          leaks.push(`${route.method} ${route.url} (${id}) answered ${response.statusCode} with Alice's data`);
        }
      }
    }
    assert.deepEqual(leaks, []);
    assert.equal(await aliceRow(), before, "Alice's account and tokens are unchanged");
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(aliceToken) })).json().name, 'Alice Secret');
    assert.ok(await t.app.services.users.attempt(alice.email, alice.plainPassword), "Alice's password still works");
    const bobNow = await t.app.services.users.findById(bob.id);
    assert.equal(bobNow?.email, bob.email, "Bob did not take Alice's address");
  });

  it("revokes only the caller's own tokens (DELETE /api/tokens and /api/tokens/current)", async () => {
    const bobToken = (await t.app.services.tokens.issue(bob.id, 'bob', ['*'])).plaintext;
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/api/tokens', headers: bearer(bobToken) })).statusCode, 204);
    const other = (await t.app.services.tokens.issue(bob.id, 'bob', ['*'])).plaintext;
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/api/tokens/current', headers: bearer(other) })).statusCode, 204);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(aliceToken) })).statusCode, 200);
  });

  it('refuses every post write of the API to a non-admin, whatever the token may do, and to an admin token without posts:write', async () => {
    const writes = routes.filter((route) => isApiRoute(route) && isUnsafe(route.method) && route.url.startsWith('/api/posts'));
    assert.ok(writes.length >= 3, `found ${writes.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    const callers: Array<[string, number, string[]]> = [
      ["a non-admin with '*'", bob.id, ['*']],
      ['a non-admin with posts:write', bob.id, ['posts:write']],
      ['a non-admin with posts:read and posts:write', bob.id, ['posts:read', 'posts:write']],
      ['an admin with posts:read only', admin.id, ['posts:read']],
      ['an admin with no abilities', admin.id, []],
    ];
    const before = await snapshotDatabase(t.db);
    const failures: string[] = [];
    for (const [who, userId, abilities] of callers) {
      const { plaintext } = await t.app.services.tokens.issue(userId, 'writer', abilities);
      await t.app.services.tokens.authenticate(t.app.services.tokens.parse(plaintext));
      const base = await snapshotDatabase(t.db);
      for (const route of writes) {
        const response = await t.app.inject({
          method: route.method as 'POST',
          url: fillPath(route.url, () => draftSlug),
          headers: bearer(plaintext),
          ...(route.method === 'DELETE' ? {} : { payload: { title: 'Written by a non-editor', status: 'published', slug: 'non-editor' } }),
        });
        tried += 1;
        if (response.statusCode !== 403 || response.body !== UNAUTHORIZED) failures.push(`${who}: ${route.method} ${route.url} → ${response.statusCode} ${response.body.slice(0, 100)}`);
      }
      assert.deepEqual(diffSnapshots(base, await snapshotDatabase(t.db)), [], `${who} changed nothing`);
    }
    assert.deepEqual(failures, []);
    const posts = diffSnapshots(before, await snapshotDatabase(t.db)).filter((line) => line.startsWith('posts:'));
    assert.deepEqual(posts, []);
  });

  it('lets an admin token with posts:write write (the refusals above are about the caller)', async () => {
    const { plaintext } = await t.app.services.tokens.issue(admin.id, 'editor', ['posts:write']);
    const response = await t.app.inject({ method: 'POST', url: '/api/posts', headers: bearer(plaintext), payload: { title: 'By the editor' } });
    assert.equal(response.statusCode, 201);
  });

  it('keeps drafts from non-admins on the list (status=draft is refused, even with posts:read)', async () => {
    const { plaintext } = await t.app.services.tokens.issue(bob.id, 'reader', ['posts:read']);
    const response = await t.app.inject({ url: '/api/posts?status=draft', headers: bearer(plaintext) });
    assert.equal(response.statusCode, 422);
    assert.ok(!response.body.includes('secret draft'));
    assert.equal((await t.app.inject({ url: `/api/posts/${draftSlug}`, headers: bearer(plaintext) })).statusCode, 404);
  });

  it("never lets a logged-in non-admin into the panel's write actions, nor the panel's login", async () => {
    const client = new WebClient(t.app);
    await login(client, bob.email, bob.plainPassword);
    await client.get('/admin/login');
    const panelLogin = await client.post('/admin/login', { email: bob.email, password: bob.plainPassword });
    assert.notEqual(panelLogin.statusCode, 303, 'a non-admin does not get into the panel');
    assert.equal((await client.get('/admin')).statusCode, 302);

    const before = await snapshotDatabase(t.db);
    const actions = routes.filter((route) => (route.url === '/admin' || route.url.startsWith('/admin/')) && isUnsafe(route.method) && route.auth === 'admin');
    assert.ok(actions.length >= 5, `found ${actions.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    const failures: string[] = [];
    await client.get('/profile');
    for (const route of actions) {
      for (const id of [String(draftId), String(alice.id), String(bob.id)]) {
        const response = await client.post(fillPath(route.url, () => id), {
          title: 'Panel write by a non-admin',
          name: 'Panel rename',
          email: 'panel@example.com',
          is_admin: '1',
          key: 'site_name',
          value: '"pwned"',
          status: 'published',
        });
        tried += 1;
        const refused = response.statusCode === 403 || (response.statusCode === 302 && response.headers.location === '/admin/login');
        if (!refused) failures.push(`${route.method} ${route.url} (${id}) → ${response.statusCode} ${String(response.headers.location ?? '')}`);
      }
    }
    assert.deepEqual(failures, []);
    const changes = diffSnapshots(before, await snapshotDatabase(t.db));
    assert.deepEqual(changes, []);
    figures('authorization', { inputs: tried, 'cross-user reads or writes': 0, 'non-admin post writes': 0 });
  });

  it("changes only the logged-in user's profile, whatever id the form carries", async () => {
    const before = await aliceRow();
    const client = new WebClient(t.app);
    await login(client, bob.email, bob.plainPassword);
    await client.get('/profile');
    await client.post('/profile', { id: String(alice.id), user_id: String(alice.id), name: 'Bob renamed', email: bob.email });
    assert.equal(await aliceRow(), before);
    assert.equal((await t.app.services.users.findById(bob.id))?.name, 'Bob renamed');
  });
});
