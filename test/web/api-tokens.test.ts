// /user/api-tokens: a logged-in user makes tokens with chosen abilities (none = read only), sees
// the plaintext once, lists and revokes only their own tokens; every form is CSRF-checked; and
// the API holds a token made here to its abilities.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { hashSecret } from '../../src/modules/tokens/token-string.js';
import { bearer, buildTestApp, createTestDatabase, createUser, issueToken, testConfig, type TestApp } from '../helpers.js';
import { characters, decodeEntities, fieldError, fieldValue, statusMessage, WebClient } from '../support/client.js';
import { login, mainOf, sessionIdOf, sessionRow } from './support.js';

const PAGE = '/user/api-tokens';

/** The plaintext shown in the page's readonly field, or null. */
function shownToken(html: string): string | null {
  const match = /<input id="new-token"[^>]*? value="([^"]*)"/.exec(html);
  return match?.[1] === undefined ? null : decodeEntities(match[1]);
}

/** The rows of the token table: id, name and the text of each cell. */
function listedTokens(html: string): { id: number; name: string; cells: string[] }[] {
  return [...html.matchAll(/<tr data-token-id="(\d+)">([\s\S]*?)<\/tr>/g)].map((match) => {
    const cells = [...match[2]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => decodeEntities(cell[1]!.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim()));
    return { id: Number(match[1]), name: cells[0] ?? '', cells };
  });
}

/** The checkboxes of the abilities that are ticked in the form. */
function tickedBoxes(html: string): string[] {
  return [...html.matchAll(/<input id="ability-[^"]+" name="abilities" type="checkbox" value="([^"]+)"( checked)?/g)].filter((m) => m[2] !== undefined).map((m) => m[1]!);
}

describe('API tokens page', () => {
  let t: TestApp;
  let counter = 0;

  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const loggedIn = async (options: { admin?: boolean } = {}) => {
    counter += 1;
    const user = await createUser(t.app, { name: `Token Person ${counter}`, email: `tokens-${counter}@example.com`, password: 'token-page-password', admin: options.admin ?? false });
    const client = new WebClient(t.app);
    await login(client, user.email, 'token-page-password');
    await client.get(PAGE);
    return { user, client };
  };

  const rowsOf = (userId: number) => t.db.kysely.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', userId).orderBy('id').execute();

  /** Creates a token through the form and returns the plaintext the next page shows. */
  const create = async (client: WebClient, form: Record<string, string> | URLSearchParams) => {
    const response = await client.post(PAGE, form);
    assert.equal(response.statusCode, 303, response.body);
    assert.equal(response.headers.location, PAGE);
    const page = await client.follow(response);
    const plaintext = shownToken(page.body);
    assert.ok(plaintext !== null, 'the new token is shown');
    return { plaintext, page };
  };

  it('sends a visitor who is not logged in to the login page', async () => {
    for (const url of [PAGE, `${PAGE}/1/delete`, `${PAGE}/delete-all`]) {
      const response = await t.app.inject({ url });
      assert.equal(response.statusCode, 302, url);
      assert.equal(response.headers.location, '/login', url);
    }
  });

  it('is linked from the site navigation and from the profile page', async () => {
    const { client } = await loggedIn();
    const dashboard = await client.get('/dashboard');
    assert.match(dashboard.body, /<nav[\s\S]*<a href="\/user\/api-tokens">API tokens<\/a>[\s\S]*<\/nav>/);
    assert.match(mainOf((await client.get('/profile')).body), /<a href="\/user\/api-tokens">Manage API tokens<\/a>/);
    const page = await client.get(PAGE);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<a href="\/user\/api-tokens" aria-current="page">API tokens<\/a>/);
    assert.match(mainOf(page.body), /You have no API tokens yet\./);
    assert.deepEqual(tickedBoxes(page.body), ['posts:read'], 'read is ticked by default');
  });

  it('creates a token with the ticked abilities and shows its plaintext in a readonly field', async () => {
    const { user, client } = await loggedIn({ admin: true });
    const { plaintext, page } = await create(client, new URLSearchParams([['name', 'deploy script'], ['abilities', 'posts:read'], ['abilities', 'posts:write']]));
    assert.equal(statusMessage(page.body), 'API token created.');
    assert.match(page.body, /<input id="new-token" class="token" type="text" readonly value="[^"]+"/);
    assert.match(page.body, /<script src="\/assets\/api-tokens\.js" defer><\/script>/);
    assert.equal(page.headers['cache-control'], 'no-store');
    const [row] = await rowsOf(user.id);
    assert.ok(row);
    assert.equal(row.name, 'deploy script');
    assert.deepEqual(JSON.parse(row.abilities), ['posts:read', 'posts:write']);
    assert.equal(plaintext.split('|')[0], String(row.id));
    // Only the digest of the secret is stored.
    assert.equal(row.token, hashSecret(plaintext.slice(plaintext.indexOf('|') + 1)));
    assert.ok(!JSON.stringify(row).includes(plaintext.slice(plaintext.indexOf('|') + 1)));
  });

  const choices: { name: string; admin: boolean; ticked: string[]; stored: string[] }[] = [
    { name: 'no box ticked: read only, never "*"', admin: false, ticked: [], stored: ['posts:read'] },
    { name: 'read only', admin: false, ticked: ['posts:read'], stored: ['posts:read'] },
    { name: 'write only (an administrator)', admin: true, ticked: ['posts:write'], stored: ['posts:write'] },
    { name: 'both, in any order and repeated (an administrator)', admin: true, ticked: ['posts:write', 'posts:read', 'posts:write'], stored: ['posts:read', 'posts:write'] },
  ];
  for (const choice of choices) {
    it(`stores the abilities chosen: ${choice.name}`, async () => {
      const { user, client } = await loggedIn({ admin: choice.admin });
      await create(client, new URLSearchParams([['name', 'chosen'], ...choice.ticked.map((ability) => ['abilities', ability])]));
      const rows = await rowsOf(user.id);
      assert.equal(rows.length, 1);
      assert.deepEqual(JSON.parse(rows[0]!.abilities), choice.stored);
    });
  }

  it('shows the plaintext once: a reload does not, and the session no longer holds it', async () => {
    const { client } = await loggedIn();
    const { plaintext } = await create(client, { name: 'once' });
    const again = await client.get(PAGE);
    assert.equal(again.statusCode, 200);
    assert.equal(shownToken(again.body), null);
    assert.ok(!again.body.includes(plaintext));
    assert.equal(statusMessage(again.body), null);
    const session = await sessionRow(t.db, sessionIdOf(client));
    assert.ok(session);
    assert.ok(!JSON.stringify(session).includes(plaintext.slice(plaintext.indexOf('|') + 1)), 'the session row no longer holds the secret');
  });

  it('lists only the user’s own tokens, newest first, with abilities, dates and "Never"', async () => {
    const { user, client } = await loggedIn();
    const other = await loggedIn();
    await create(other.client, { name: 'not yours' });
    const fromApi = await issueToken(t.app, user.email, 'token-page-password', 'laptop');
    const { plaintext: readOnly } = await create(client, { name: 'reader' });
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(readOnly) })).statusCode, 200);

    const page = await client.get(PAGE);
    const rows = listedTokens(page.body);
    assert.deepEqual(rows.map((row) => row.name), ['reader', 'laptop']);
    const stored = await rowsOf(user.id);
    assert.deepEqual(rows.map((row) => row.id).sort(), stored.map((row) => row.id).sort());
    const [reader, laptop] = rows;
    assert.equal(reader!.cells[1], 'posts:read');
    assert.match(reader!.cells[2]!, /UTC$/, 'created');
    assert.match(reader!.cells[3]!, /UTC$/, 'last used, after a call');
    assert.equal(reader!.cells[4], 'Never', 'no expiry');
    assert.equal(laptop!.cells[1], 'all', 'a token from POST /api/tokens has every ability');
    assert.equal(laptop!.cells[3], 'Never', 'never used');
    assert.ok(!page.body.includes('not yours'));
    assert.ok(!page.body.includes(fromApi));
    for (const row of stored) assert.ok(!page.body.includes(row.token), 'no hash on the page');
    assert.match(page.body, /<time datetime="[0-9T:.-]+Z">/);
  });

  it('shows when tokens expire under a global lifetime, and marks expired ones', async () => {
    const app = await buildTestApp({ SANCTUM_EXPIRATION: '60' });
    try {
      const user = await createUser(app.app, { email: 'expiring@example.com', password: 'token-page-password' });
      const client = new WebClient(app.app);
      await login(client, user.email, 'token-page-password');
      await client.get(PAGE);
      await create(client, { name: 'fresh' });
      const old = await app.app.services.tokens.issue(user.id, 'old', ['posts:read']);
      await app.db.kysely.updateTable('personal_access_tokens').set({ created_at: new Date(Date.now() - 2 * 3_600_000).toISOString() }).where('id', '=', old.id).execute();
      const rows = listedTokens((await client.get(PAGE)).body);
      const fresh = rows.find((row) => row.name === 'fresh')!;
      const expired = rows.find((row) => row.name === 'old')!;
      assert.match(fresh.cells[4]!, /UTC$/);
      assert.doesNotMatch(fresh.cells[4]!, /Expired/);
      assert.match(expired.cells[4]!, /UTC Expired$/);
    } finally {
      await app.close();
    }
  });

  it('revokes one token after a confirmation step; the token stops working', async () => {
    const { user, client } = await loggedIn();
    const { plaintext: keep } = await create(client, { name: 'keep' });
    const { plaintext: drop } = await create(client, { name: 'drop me' });
    const id = Number(drop.split('|')[0]);

    const confirm = await client.get(`${PAGE}/${id}/delete`);
    assert.equal(confirm.statusCode, 200);
    assert.match(characters(mainOf(confirm.body)), /Revoke the token “drop me”\?/);
    assert.match(confirm.body, new RegExp(`<form method="post" action="/user/api-tokens/${id}/delete"`));
    assert.equal((await rowsOf(user.id)).length, 2, 'the confirmation page changes nothing');

    const response = await client.post(`${PAGE}/${id}/delete`);
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, PAGE);
    const page = await client.follow(response);
    assert.equal(statusMessage(page.body), 'API token revoked.');
    assert.deepEqual(listedTokens(page.body).map((row) => row.name), ['keep']);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(drop) })).statusCode, 401);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(keep) })).statusCode, 200);
  });

  it('revokes all of the user’s tokens, and no one else’s', async () => {
    const { user, client } = await loggedIn();
    const other = await loggedIn();
    const { plaintext: theirs } = await create(other.client, { name: 'theirs' });
    await create(client, { name: 'one' });
    await issueToken(t.app, user.email, 'token-page-password');

    const confirm = await client.get(`${PAGE}/delete-all`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /<form method="post" action="\/user\/api-tokens\/delete-all"/);
    assert.match(confirm.body, />Revoke all tokens<\/button>/);

    const response = await client.post(`${PAGE}/delete-all`);
    assert.equal(response.statusCode, 303);
    const page = await client.follow(response);
    assert.equal(statusMessage(page.body), 'All your API tokens have been revoked.');
    assert.deepEqual(await rowsOf(user.id), []);
    assert.equal((await rowsOf(other.user.id)).length, 1);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(theirs) })).statusCode, 200);
  });

  it('answers 404 for another user’s token, or no token, and changes nothing', async () => {
    const { client } = await loggedIn();
    const other = await loggedIn();
    const { plaintext } = await create(other.client, { name: 'victim' });
    const id = plaintext.split('|')[0]!;
    const cases: { name: string; method: 'GET' | 'POST'; url: string }[] = [
      { name: 'confirming another user’s token', method: 'GET', url: `${PAGE}/${id}/delete` },
      { name: 'revoking another user’s token', method: 'POST', url: `${PAGE}/${id}/delete` },
      { name: 'revoking a token that does not exist', method: 'POST', url: `${PAGE}/2147483647/delete` },
      { name: 'an id that is not a number', method: 'POST', url: `${PAGE}/abc/delete` },
      { name: 'an id with a sign', method: 'GET', url: `${PAGE}/-1/delete` },
      { name: 'an id past the integer range', method: 'POST', url: `${PAGE}/99999999999/delete` },
    ];
    for (const test of cases) {
      const response = test.method === 'GET' ? await client.get(test.url) : await client.post(test.url);
      assert.equal(response.statusCode, 404, test.name);
    }
    const rows = await rowsOf(other.user.id);
    assert.deepEqual(rows.map((row) => row.name), ['victim']);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(plaintext) })).statusCode, 200);
  });

  it('refuses every form without the CSRF token with 419 and changes nothing', async () => {
    const { user, client } = await loggedIn();
    const { plaintext } = await create(client, { name: 'guarded' });
    const id = plaintext.split('|')[0]!;
    const cases: { name: string; url: string; form: Record<string, string>; token: string | false }[] = [
      { name: 'create, no token', url: PAGE, form: { name: 'forged' }, token: false },
      { name: 'create, a wrong token', url: PAGE, form: { name: 'forged' }, token: 'not-the-token' },
      { name: 'revoke one, no token', url: `${PAGE}/${id}/delete`, form: {}, token: false },
      { name: 'revoke one, a wrong token', url: `${PAGE}/${id}/delete`, form: {}, token: 'x' },
      { name: 'revoke all, no token', url: `${PAGE}/delete-all`, form: {}, token: false },
    ];
    for (const test of cases) {
      const response = await client.post(test.url, test.form, { token: test.token });
      assert.equal(response.statusCode, 419, test.name);
    }
    const rows = await rowsOf(user.id);
    assert.deepEqual(rows.map((row) => row.name), ['guarded']);
  });

  const invalid: { name: string; form: [string, string][]; field: string; message: string }[] = [
    { name: 'no name', form: [], field: 'name', message: 'The name field is required.' },
    { name: 'an empty name', form: [['name', '']], field: 'name', message: 'The name field is required.' },
    { name: 'a name over 255 characters', form: [['name', 'n'.repeat(256)]], field: 'name', message: 'The name field must not be greater than 255 characters.' },
    { name: 'an unknown ability', form: [['name', 'ok'], ['abilities', 'users:delete']], field: 'abilities', message: 'The selected permissions is invalid.' },
    { name: 'the "*" ability', form: [['name', 'ok'], ['abilities', 'posts:read'], ['abilities', '*']], field: 'abilities', message: 'The selected permissions is invalid.' },
  ];
  for (const test of invalid) {
    it(`answers the form again with 422 for ${test.name}, keeping what was typed`, async () => {
      const { user, client } = await loggedIn({ admin: true });
      const response = await client.post(PAGE, new URLSearchParams([...test.form, ['abilities', 'posts:write']]));
      assert.equal(response.statusCode, 422);
      assert.equal(test.field === 'abilities' ? /id="field-abilities-error">([^<]*)</.exec(response.body)?.[1] : fieldError(response.body, test.field), test.message);
      if (test.field === 'abilities') assert.match(response.body, /<fieldset class="abilities has-error" aria-describedby="field-abilities-error">/);
      const name = test.form.find(([key]) => key === 'name')?.[1];
      if (name !== undefined) assert.equal(fieldValue(response.body, 'name'), name);
      assert.ok(tickedBoxes(response.body).includes('posts:write'), 'the ticked boxes stay ticked');
      assert.equal(shownToken(response.body), null);
      assert.deepEqual(await rowsOf(user.id), []);
    });
  }

  it('accepts a name of exactly 255 characters', async () => {
    const { user, client } = await loggedIn();
    await create(client, { name: 'n'.repeat(255) });
    assert.equal((await rowsOf(user.id))[0]?.name.length, 255);
  });

  it('answers a script asking for JSON with 201 and the token, and flashes nothing', async () => {
    const { user, client } = await loggedIn({ admin: true });
    const response = await client.postJson(PAGE, { name: 'from fetch', abilities: ['posts:write'] });
    assert.equal(response.statusCode, 201);
    const body = response.json() as { token: string; id: number; name: string; abilities: string[] };
    assert.equal(body.name, 'from fetch');
    assert.deepEqual(body.abilities, ['posts:write']);
    assert.equal((await rowsOf(user.id))[0]?.id, body.id);
    assert.equal(shownToken((await client.get(PAGE)).body), null);
    const invalidJson = await client.postJson(PAGE, { name: '' });
    assert.equal(invalidJson.statusCode, 422);
    assert.deepEqual(invalidJson.json(), { message: 'The name field is required.', errors: { name: ['The name field is required.'] } });
  });

  it('holds the API to the abilities chosen here, even for an administrator', async () => {
    const { client } = await loggedIn({ admin: true });
    const { plaintext: reader } = await create(client, { name: 'reader' });
    const { plaintext: writer } = await create(client, { name: 'writer', abilities: 'posts:write' });
    const post = (token: string, title: string) => t.app.inject({ method: 'POST', url: '/api/posts', headers: bearer(token), payload: { title } });

    const refused = await post(reader, 'Not allowed');
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().message, 'This action is unauthorized.');
    assert.equal(await t.db.kysely.selectFrom('posts').select('id').where('title', '=', 'Not allowed').executeTakeFirst(), undefined);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(reader) })).statusCode, 200);

    const created = await post(writer, 'Written with a page token');
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().data.title, 'Written with a page token');
  });

  // Abilities guard the account (issue 24 §2): user:write is offered to everyone, and only a
  // token made with it may change the account; none ticked is still read only.
  it('offers user:write to every user, and only a token made with it may change the account through the API', async () => {
    const { user, client } = await loggedIn();
    const page = (await client.get(PAGE)).body;
    assert.match(decodeEntities(page), /value="user:write"[^>]*>\s*<label for="ability-user_write"><code>user:write<\/code> · Change the account<\/label>/);
    const { plaintext: writer } = await create(client, new URLSearchParams([['name', 'account'], ['abilities', 'posts:read'], ['abilities', 'user:write']]));
    const { plaintext: none } = await create(client, { name: 'nothing ticked' });
    const rows = await rowsOf(user.id);
    assert.deepEqual(rows.map((row) => JSON.parse(row.abilities) as string[]), [['posts:read', 'user:write'], ['posts:read']]);
    const rename = (token: string, name: string) => t.app.inject({ method: 'PUT', url: '/api/user', headers: bearer(token), payload: { name } });
    assert.equal((await rename(none, 'Read Only')).statusCode, 403);
    assert.equal((await rename(writer, 'Account Writer')).statusCode, 200);
    assert.equal((await t.app.services.users.findById(user.id))?.name, 'Account Writer');
  });

  it('offers posts:write to administrators only, with help that names no role that does not exist', async () => {
    const boxes = (html: string) => [...html.matchAll(/name="abilities" type="checkbox" value="([^"]+)"/g)].map((m) => m[1]);
    const hint = (html: string, ability: string) => decodeEntities(new RegExp(`id="ability-${ability}-hint">([^<]*)<`).exec(html)?.[1] ?? '');
    const { client: member } = await loggedIn();
    const { client: admin } = await loggedIn({ admin: true });
    const memberPage = (await member.get(PAGE)).body;
    const adminPage = (await admin.get(PAGE)).body;
    assert.deepEqual(boxes(memberPage), ['posts:read', 'user:write']);
    assert.equal(hint(memberPage, 'posts_read'), 'List and read published posts.');
    assert.deepEqual(boxes(adminPage), ['posts:read', 'posts:write', 'user:write']);
    assert.match(hint(adminPage, 'posts_read'), /drafts and archived posts included/);
    assert.match(hint(adminPage, 'posts_write'), /^Create, update and delete posts\. Offered to administrators only/);
    for (const client of [member, admin]) client.cookies.set('locale', 'fr');
    const memberFr = (await member.get(PAGE)).body;
    const adminFr = (await admin.get(PAGE)).body;
    assert.deepEqual(boxes(memberFr), ['posts:read', 'user:write']);
    assert.equal(hint(memberFr, 'posts_read'), 'Lister et lire les articles publiés.');
    assert.match(hint(adminFr, 'posts_write'), /Proposé aux administrateurs seulement/);
    for (const html of [memberPage, adminPage, memberFr, adminFr]) assert.doesNotMatch(mainOf(html), /editor|éditeur/i);
  });

  it('refuses a forged posts:write from a non-administrator with the form’s 422 and makes no token', async () => {
    const { user, client } = await loggedIn();
    const response = await client.post(PAGE, new URLSearchParams([['name', 'forged'], ['abilities', 'posts:read'], ['abilities', 'posts:write']]));
    assert.equal(response.statusCode, 422);
    assert.equal(/id="field-abilities-error">([^<]*)</.exec(response.body)?.[1], 'The selected permissions is invalid.');
    assert.equal(fieldValue(response.body, 'name'), 'forged');
    assert.deepEqual(tickedBoxes(response.body), ['posts:read'], 'the box that was not offered does not appear');
    const json = await client.postJson(PAGE, { name: 'forged', abilities: ['posts:write'] });
    assert.equal(json.statusCode, 422);
    assert.deepEqual(json.json(), { message: 'The selected permissions is invalid.', errors: { abilities: ['The selected permissions is invalid.'] } });
    assert.deepEqual(await rowsOf(user.id), []);
  });

  it('lets a demoted administrator’s posts:write token write no more (the API checks the role on each request)', async () => {
    const { user, client } = await loggedIn({ admin: true });
    const { plaintext } = await create(client, { name: 'writer', abilities: 'posts:write' });
    const post = (title: string) => t.app.inject({ method: 'POST', url: '/api/posts', headers: bearer(plaintext), payload: { title } });
    assert.equal((await post('While an administrator')).statusCode, 201);
    await t.db.kysely.updateTable('users').set({ is_admin: 0 }).where('id', '=', user.id).execute();
    assert.equal((await post('After the demotion')).statusCode, 403);
  });

  it('speaks French with the French locale', async () => {
    const { client } = await loggedIn();
    client.cookies.set('locale', 'fr');
    const page = await client.get(PAGE);
    assert.match(characters(page.body), /<h1>Jetons d’API<\/h1>/);
    assert.match(characters(page.body), /Vous n’avez encore aucun jeton d’API\./);
    const refused = await client.post(PAGE, { name: '' });
    assert.equal(refused.statusCode, 422);
    assert.equal(fieldError(refused.body, 'name'), 'Le champ nom est obligatoire.');
    const created = await create(client, { name: 'fr' });
    assert.equal(statusMessage(created.page.body), 'Jeton d’API créé.');
    assert.match(created.page.body, /il ne sera plus affiché/);
  });
});

describe('API tokens page with verification on', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ MUST_VERIFY_EMAIL: 'true' });
  });
  after(() => t.close());

  it('sends an unverified user to the verification notice', async () => {
    const user = await createUser(t.app, { email: 'unverified-tokens@example.com', password: 'token-page-password', verified: false });
    const client = new WebClient(t.app);
    await login(client, user.email, 'token-page-password');
    const response = await client.get(PAGE);
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/email/verify');
  });
});

describe('API tokens page logging', () => {
  let app: FastifyInstance;
  let drop: () => Promise<void>;
  const raw: string[] = [];

  before(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    app = await buildApp(testConfig({ LOG_LEVEL: 'trace' }), { db: database.db, loggerStream: { write: (chunk: string) => void raw.push(chunk) } });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await drop();
  });

  it('never writes a new token’s plaintext or secret to the log', async () => {
    const user = await createUser(app, { email: 'logged@example.com', password: 'token-page-password' });
    const client = new WebClient(app);
    await login(client, user.email, 'token-page-password');
    await client.get(PAGE);
    const response = await client.post(PAGE, { name: 'quiet' });
    const page = await client.follow(response);
    const plaintext = shownToken(page.body);
    assert.ok(plaintext !== null);
    await app.inject({ url: '/api/user', headers: bearer(plaintext) });
    const secret = plaintext.slice(plaintext.indexOf('|') + 1);
    const log = raw.join('');
    assert.ok(log.length > 0, 'something was logged');
    assert.ok(!log.includes(secret), 'the secret is not in the log');
  });
});
