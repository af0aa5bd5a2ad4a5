// Keys named like members of Object.prototype (constructor, __proto__, toString, hasOwnProperty,
// valueOf, prototype), with values of every kind, on every route that reads a body or a query
// string, JSON and form alike. Such a key is an unknown field: the answer is the one the same
// request gets without it. The JSON parser refuses only the two prototype-pollution shapes (a
// `__proto__` key, a `constructor` holding a `prototype`) with a 400. A NUL in such a key's
// value once answered 500 (an error map built on a plain object found Object.prototype's
// `constructor` where it expected no messages yet).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { bearer, createUser, issueToken, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { asText, PROTOTYPE_KEYS, PROTOTYPE_KEY_SAMPLES } from '../fuzz/arbitraries.js';
import { buildAppWithRoutes, fillPath, isApiRoute, isErrorEnvelope, isUnsafe, percentEncode, type RouteInfo } from './support.js';

const PASSWORD = 'prototype keys 4 all';
const NOT_JSON = '{"message":"The request body is not valid JSON.","errors":{}}';

/** An object whose only own property is `key` (a literal `{__proto__: v}` would set the prototype). */
const withKey = (key: string, value: unknown): Record<string, unknown> => Object.fromEntries([[key, value]]);

/** The shapes secure-json-parse refuses (app.ts): a `__proto__` key anywhere, a `constructor` holding a `prototype`. */
function pollutes(key: string, value: unknown): boolean {
  const object = typeof value === 'object' && value !== null && !Array.isArray(value);
  return key === '__proto__' || (object && Object.hasOwn(value, '__proto__')) || (key === 'constructor' && object && Object.hasOwn(value, 'prototype'));
}

const what = (response: LightMyRequestResponse) => `${response.statusCode} ${response.body.slice(0, 200)}`;

describe('keys named like members of Object.prototype', () => {
  let t: TestApp;
  let routes: RouteInfo[];
  let user: Awaited<ReturnType<typeof createUser>>;
  let userToken: string;
  let adminToken: string;
  let slug: string;
  const clients: Record<'guest' | 'user' | 'admin', WebClient | null> = { guest: null, user: null, admin: null };
  let tried = 0;

  before(async () => {
    ({ t, routes } = await buildAppWithRoutes());
    user = await createUser(t.app, { password: PASSWORD, name: 'Proto User' });
    const admin = await createUser(t.app, { password: PASSWORD, admin: true });
    userToken = await issueToken(t.app, user.email, PASSWORD);
    adminToken = await issueToken(t.app, admin.email, PASSWORD);
    const post = await t.app.services.posts.create(admin.id, { title: 'A published post', body: 'Text', status: 'published' });
    slug = post.slug;
    clients.guest = new WebClient(t.app, { remoteAddress: '10.6.0.1' });
    await clients.guest.get('/login');
    clients.user = new WebClient(t.app, { remoteAddress: '10.6.0.2' });
    await clients.user.get('/login');
    assert.equal((await clients.user.post('/login', { email: user.email, password: PASSWORD })).statusCode, 303);
    await clients.user.get('/profile');
    clients.admin = new WebClient(t.app, { remoteAddress: '10.6.0.3' });
    await clients.admin.get('/admin/login');
    assert.equal((await clients.admin.post('/admin/login', { email: admin.email, password: PASSWORD })).statusCode, 303);
    await clients.admin.get('/admin/posts/new');
  });
  after(async () => {
    console.log(`FIGURES prototype keys: ${tried} inputs, 0 5xx`);
    await t.close();
  });

  const accountRow = () => t.db.kysely.selectFrom('users').select(['name', 'email', 'password']).where('id', '=', user.id).executeTakeFirstOrThrow();

  it('ignores {"constructor": "a\\u0000b"} and {"toString": "a\\u0000b"} on PUT /api/user: 200, the account unchanged', async () => {
    const before = await accountRow();
    for (const key of ['constructor', 'toString']) {
      const response = await t.app.inject({ method: 'PUT', url: '/api/user', headers: bearer(userToken), payload: withKey(key, 'a\u0000b') });
      assert.equal(response.statusCode, 200, `${key}: ${what(response)}`);
      assert.equal((response.json() as { name: string }).name, 'Proto User');
    }
    assert.deepEqual(await accountRow(), before);
  });

  it('answers POST /api/tokens with a "constructor": "a\\u0000b" key as without it: 401, the credentials refused', async () => {
    const credentials = { email: 'a@example.test', password: 'x', device_name: 'd' };
    const plain = await t.app.inject({ method: 'POST', url: '/api/tokens', headers: { accept: 'application/json' }, payload: credentials });
    const withConstructor = await t.app.inject({ method: 'POST', url: '/api/tokens', headers: { accept: 'application/json' }, payload: { ...credentials, constructor: 'a\u0000b' } });
    assert.equal(plain.statusCode, 401, what(plain));
    assert.equal(withConstructor.statusCode, 401, what(withConstructor));
    assert.equal(withConstructor.body, plain.body);
  });

  it('answers every API route that reads a body as it does without such a key (a 400 for the two prototype-pollution shapes)', async () => {
    const withBodies = routes.filter((route) => isApiRoute(route) && Object.keys(route.bodyFields).length > 0);
    assert.ok(withBodies.length >= 5, `the API's routes with a body: ${withBodies.map((route) => `${route.method} ${route.url}`).join(', ')}`);
    for (const route of withBodies) {
      // A post that does not exist: the write routes are refused whatever the body, so nothing changes.
      const url = fillPath(route.url, () => 'no-such-post');
      const send = (payload: Record<string, unknown>) => t.app.inject({ method: route.method as 'POST', url, headers: bearer(adminToken), payload });
      const plain = await send({});
      for (const key of PROTOTYPE_KEYS) {
        for (const value of PROTOTYPE_KEY_SAMPLES) {
          const response = await send(withKey(key, value));
          tried += 1;
          const where = `${route.method} ${url} with ${key}: ${JSON.stringify(value)} → ${what(response)}`;
          assert.ok(isErrorEnvelope(response.body) || response.statusCode < 400, `not the envelope: ${where}`);
          if (pollutes(key, value)) {
            assert.equal(response.statusCode, 400, where);
            assert.equal(response.body, NOT_JSON, where);
          } else {
            assert.equal(response.statusCode, plain.statusCode, `answered as without the key (${what(plain)}): ${where}`);
            if (plain.statusCode >= 400) assert.equal(response.body, plain.body, where);
          }
        }
      }
    }
  });

  it('answers every API read with such a key in its query string as it does without it', async () => {
    const reads = routes.filter((route) => isApiRoute(route) && route.method === 'GET');
    assert.ok(reads.length >= 4, `the API's GET routes: ${reads.map((route) => route.url).join(', ')}`);
    for (const route of reads) {
      const path = fillPath(route.url, () => slug);
      const plain = await t.app.inject({ url: path, headers: bearer(adminToken) });
      for (const key of PROTOTYPE_KEYS) {
        for (const value of PROTOTYPE_KEY_SAMPLES) {
          const url = `${path}?${percentEncode(key)}=${percentEncode(asText(value))}`;
          const response = await t.app.inject({ url, headers: bearer(adminToken) });
          tried += 1;
          assert.equal(response.statusCode, plain.statusCode, `GET ${url} → ${what(response)}, without the key ${what(plain)}`);
          if (plain.statusCode >= 400) assert.equal(response.body, plain.body, url);
        }
      }
    }
  });

  // The visitor each form is for, so that it reaches its validation.
  const clientFor = (route: RouteInfo): WebClient => {
    if (route.auth === 'admin') return clients.admin!;
    if (route.auth === 'user' || route.auth === 'verified') return clients.user!;
    return clients.guest!;
  };
  const forms = () => {
    const found = routes.filter((route) => !isApiRoute(route) && isUnsafe(route.method) && Object.keys(route.bodyFields).length > 0);
    assert.ok(found.length >= 12, `the form actions with fields: ${found.map((route) => route.url).join(', ')}`);
    return found;
  };
  // An id, key or token that names nothing: the forms that change a record are refused whatever the body.
  const formPath = (route: RouteInfo) => fillPath(route.url, () => '999999');

  /** Posts each form empty, then with each key and sample; `check` judges each answer against the empty form's. */
  const everyForm = async (
    send: (client: WebClient, url: string, fields: Record<string, unknown>) => Promise<LightMyRequestResponse>,
    check: (response: LightMyRequestResponse, plain: LightMyRequestResponse, key: string, value: unknown, where: string) => void,
  ) => {
    for (const route of forms()) {
      const client = clientFor(route);
      const url = formPath(route);
      const plain = await send(client, url, {});
      assert.ok(plain.statusCode >= 400, `an empty form is refused: ${route.url} ${what(plain)}`);
      for (const key of PROTOTYPE_KEYS) {
        for (const value of PROTOTYPE_KEY_SAMPLES) {
          const response = await send(client, url, withKey(key, value));
          tried += 1;
          check(response, plain, key, value, `POST ${url} with ${key}: ${JSON.stringify(value)} → ${what(response)}`);
        }
      }
    }
  };

  it('answers every form, posted as a browser does, as the same form without such a key', async () => {
    const asForm = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, asText(value)]));
    await everyForm(
      (client, url, fields) => client.post(url, asForm(fields)),
      (response, plain, _key, _value, where) => {
        assert.equal(response.statusCode, plain.statusCode, `answered as the empty form (${plain.statusCode}): ${where}`);
        assert.match(String(response.headers['content-type']), /^text\/html/, where);
      },
    );
  });

  it('answers every form, posted as JSON by a script, as without such a key (the envelope; a 400 for the two prototype-pollution shapes)', async () => {
    await everyForm(
      (client, url, fields) => client.postJson(url, fields),
      (response, plain, key, value, where) => {
        if (pollutes(key, value)) {
          assert.equal(response.statusCode, 400, where);
          assert.equal(response.body, NOT_JSON, where);
          return;
        }
        assert.equal(response.statusCode, plain.statusCode, `answered as the empty form (${plain.statusCode}): ${where}`);
        // The panel's forms answer with their page, to a script too; the site's with the envelope.
        if (/^application\/json/.test(String(plain.headers['content-type']))) assert.equal(response.body, plain.body, where);
      },
    );
  });
});
