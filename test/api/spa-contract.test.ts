// The first-party SPA's browser routes, as the OpenAPI document describes them: every answer a
// JSON client gets through the SPA flow (GET /sanctum/csrf-cookie, then X-XSRF-TOKEN) is one the
// document declares for that operation, with its content type, and its body validates against
// the declared schema (Ajv, on the served document itself). Failure answers included: the 422
// and 429 envelopes, the 419 of a missing or wrong header, 401, 409, 400 and 415.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { LightMyRequestResponse } from 'fastify';
import { hashSecret } from '../../src/modules/tokens/token-string.js';
import { SESSION_COOKIE, cookieName } from '../../src/plugins/session.js';
import { createUser, type TestApp } from '../helpers.js';
import { codeAt, enableTwoFactor } from '../support/two-factor-sign-in.js';
import { CookieJar, buildStatefulApp } from './stateful-support.js';

const SPA = 'http://localhost:5173';

type Operation = { parameters?: { in: string; name: string; required?: boolean }[]; responses: Record<string, { content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }>; requestBody?: { content: Record<string, unknown> }; security?: unknown };
type Document = { paths: Record<string, Record<string, Operation>>; components: { securitySchemes: Record<string, { name?: string; in?: string }> } };

describe('the SPA endpoints answer a JSON client as the OpenAPI document says', () => {
  let t: TestApp;
  let doc: Document;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });

  before(async () => {
    t = await buildStatefulApp({ SANCTUM_STATEFUL_DOMAINS: 'localhost:5173' });
    doc = (await t.app.inject({ url: '/api/openapi.json' })).json() as Document;
    ajv.addSchema(doc as object, 'openapi');
  });
  after(() => t.close());

  const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

  /** Asserts the answer is one the document declares for `method path`, body and headers included. */
  function assertDocumented(response: LightMyRequestResponse, method: string, path: string): void {
    const operation = doc.paths[path]?.[method.toLowerCase()];
    assert.ok(operation, `${method} ${path} is documented`);
    const status = String(response.statusCode);
    const declared = operation.responses[status];
    assert.ok(declared, `${method} ${path} declares its ${status} (body: ${response.body})`);
    for (const header of Object.keys(declared.headers ?? {})) assert.ok(response.headers[header.toLowerCase()] !== undefined, `${status} carries ${header}`);
    if (declared.content === undefined) {
      assert.equal(response.body, '', `${method} ${path} ${status} has no body`);
      return;
    }
    assert.match(String(response.headers['content-type']), /^application\/json/, `${method} ${path} ${status} is JSON, not a page`);
    const validate = ajv.getSchema(`openapi#/${pointer('paths', path, method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema')}`);
    assert.ok(validate, 'the schema resolves');
    assert.ok(validate(response.json()), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)} in ${response.body}`);
  }

  /** A browser's start of the SPA flow: the session cookie and the XSRF-TOKEN cookie. */
  const start = async () => new CookieJar().take(await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));
  const xsrf = (jar: CookieJar) => decodeURIComponent(jar.get('XSRF-TOKEN') ?? '');
  const headers = (jar: CookieJar, token: string | null = xsrf(jar)) => ({ origin: SPA, accept: 'application/json', cookie: jar.header(), ...(token === null ? {} : { 'x-xsrf-token': token }) });

  async function call(jar: CookieJar, method: string, url: string, payload?: Record<string, unknown>, token?: string | null, remoteAddress?: string): Promise<LightMyRequestResponse> {
    const response = await t.app.inject({ method: method as 'POST', url, headers: headers(jar, token), ...(payload === undefined ? {} : { payload }), ...(remoteAddress === undefined ? {} : { remoteAddress }) });
    jar.take(response);
    assertDocumented(response, method, url);
    return response;
  }

  /** A session signed in through POST /login, as the SPA signs in. */
  async function signedIn(email: string, password: string): Promise<CookieJar> {
    const jar = await start();
    assert.equal((await call(jar, 'POST', '/login', { email, password })).statusCode, 204);
    return jar;
  }

  it('documents every SPA step under the spa tag: JSON and form bodies, the session cookie, the X-XSRF-TOKEN header', () => {
    const schemes = doc.components.securitySchemes;
    assert.deepEqual([schemes.session?.in, schemes.session?.name], ['cookie', cookieName(t.config, SESSION_COOKIE)]);
    for (const path of ['/login', '/logout', '/register', '/forgot-password', '/reset-password', '/two-factor-challenge', '/user/confirm-password']) {
      const operation = doc.paths[path]?.post;
      assert.ok(operation, path);
      assert.deepEqual(operation.security, [{ session: [] }], path);
      assert.deepEqual(
        operation.parameters?.map(({ in: where, name, required }) => ({ where, name, required })),
        [{ where: 'header', name: 'X-XSRF-TOKEN', required: true }],
        path,
      );
      for (const status of ['419', '500', '503']) assert.ok(operation.responses[status], `${path} ${status}`);
      if (path !== '/logout') assert.deepEqual(Object.keys(operation.requestBody?.content ?? {}), ['application/json', 'application/x-www-form-urlencoded'], path);
    }
  });

  it('gives every SPA step an operationId, a summary, and an example of each JSON answer that fits its schema', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!(operation as { tags?: string[] }).tags?.includes('spa') || path.startsWith('/sanctum/')) continue;
        const { operationId, summary } = operation as { operationId?: string; summary?: string };
        assert.ok(operationId && summary, `${method} ${path}`);
        for (const [status, answer] of Object.entries(operation.responses)) {
          const media = answer.content?.['application/json'] as { schema: object; example?: unknown } | undefined;
          if (media === undefined) continue;
          const example = media.example ?? (media.schema as { examples?: unknown[] }).examples?.[0];
          assert.ok(example !== undefined, `${method} ${path} ${status} has an example`);
          const validate = ajv.getSchema(`openapi#/${pointer('paths', path, method, 'responses', status, 'content', 'application/json', 'schema')}`);
          assert.ok(validate?.(example), `${method} ${path} ${status}'s example fits its schema`);
        }
      }
    }
  });

  it('GET /sanctum/csrf-cookie: 204, the XSRF-TOKEN and session cookies in its declared Set-Cookie', async () => {
    const response = await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA, accept: 'application/json' } });
    assertDocumented(response, 'GET', '/sanctum/csrf-cookie');
    assert.equal(response.statusCode, 204);
    const names = (response.cookies as { name: string }[]).map((cookie) => cookie.name).sort();
    assert.deepEqual(names, [cookieName(t.config, SESSION_COOKIE), 'XSRF-TOKEN'].sort());
    assert.equal(response.headers['cache-control'], 'no-store');
    // The document declares the Set-Cookie it sends (issue 28), naming both cookies, and its no-store.
    const declared = doc.paths['/sanctum/csrf-cookie']?.get?.responses['204']?.headers as Record<string, { description?: string; schema?: { type?: string; description?: string } }> | undefined;
    const setCookie = declared?.['Set-Cookie'];
    assert.ok(setCookie, 'the 204 of GET /sanctum/csrf-cookie declares Set-Cookie');
    assert.equal(setCookie.schema?.type, 'string');
    assert.match(`${setCookie.description ?? ''} ${setCookie.schema?.description ?? ''}`, /XSRF-TOKEN[\s\S]*session cookie/);
    assert.ok(declared['Cache-Control'], 'and its Cache-Control');
  });

  it('POST /login: 204; 422 for bad fields and for wrong credentials; 419 without or with a wrong header; 409 once signed in', async () => {
    const user = await createUser(t.app);
    const jar = await start();
    assert.equal((await call(jar, 'POST', '/login', { email: 'nope', password: 'abc' })).statusCode, 422);
    assert.equal((await call(jar, 'POST', '/login', { email: user.email, password: 'wrong-password' })).statusCode, 422);
    assert.equal((await call(jar, 'POST', '/login', { email: user.email, password: user.plainPassword }, null)).statusCode, 419);
    assert.equal((await call(jar, 'POST', '/login', { email: user.email, password: user.plainPassword }, 'not-the-token')).statusCode, 419);
    assert.equal((await call(jar, 'POST', '/login', { email: user.email, password: user.plainPassword })).statusCode, 204);
    const again = await call(jar, 'POST', '/login', { email: user.email, password: user.plainPassword });
    assert.equal(again.statusCode, 409, 'a signed-in session gets the envelope, not the dashboard');
  });

  it('POST /login takes a urlencoded form as well and answers it with the same JSON', async () => {
    const user = await createUser(t.app);
    const jar = await start();
    const response = await t.app.inject({
      method: 'POST',
      url: '/login',
      headers: { ...headers(jar), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: user.email, password: user.plainPassword }).toString(),
    });
    assertDocumented(response, 'POST', '/login');
    assert.equal(response.statusCode, 204);
  });

  it('POST /login: 400 for a body that is not JSON, 413 for one too large, 415 for a type it does not read, each the envelope', async () => {
    const jar = await start();
    const tooLarge = JSON.stringify({ email: 'x'.repeat(t.config.bodyLimit), password: 'whatever' });
    for (const [type, body, status] of [['application/json', '{"email":', 400], ['application/json', tooLarge, 413], ['application/xml', '<login/>', 415]] as const) {
      const response = await t.app.inject({ method: 'POST', url: '/login', headers: { ...headers(jar), 'content-type': type }, payload: body });
      assert.equal(response.statusCode, status, response.body);
      assertDocumented(response, 'POST', '/login');
    }
  });

  it('POST /login: the 429 envelope with Retry-After after too many tries', async () => {
    const user = await createUser(t.app);
    const jar = await start();
    let response: LightMyRequestResponse | undefined;
    for (let i = 0; i < 6; i += 1) response = await call(jar, 'POST', '/login', { email: user.email, password: 'wrong-password' }, undefined, '10.9.8.7');
    assert.equal(response?.statusCode, 429);
    assert.ok(Number(response.headers['retry-after']) > 0);
  });

  it('POST /login then /two-factor-challenge: 200 {"two_factor": true}, 422 for a wrong code, 419 without the header, 204 for the right code', async () => {
    const user = await createUser(t.app);
    const { secret } = await enableTwoFactor(t.app, user.id);
    const jar = await start();
    const password = await call(jar, 'POST', '/login', { email: user.email, password: user.plainPassword });
    assert.equal(password.statusCode, 200);
    assert.deepEqual(password.json(), { two_factor: true });
    assert.equal((await call(jar, 'POST', '/two-factor-challenge', { code: '000000' })).statusCode, 422);
    assert.equal((await call(jar, 'POST', '/two-factor-challenge', { code: await codeAt(secret) }, null)).statusCode, 419);
    assert.equal((await call(jar, 'POST', '/two-factor-challenge', { code: await codeAt(secret) })).statusCode, 204);
  });

  it('POST /two-factor-challenge: the 429 envelope with Retry-After after too many wrong codes', async () => {
    const user = await createUser(t.app);
    await enableTwoFactor(t.app, user.id);
    const jar = await start();
    assert.equal((await call(jar, 'POST', '/login', { email: user.email, password: user.plainPassword })).statusCode, 200);
    let response: LightMyRequestResponse | undefined;
    for (let i = 0; i < 6 && response?.statusCode !== 429; i += 1) response = await call(jar, 'POST', '/two-factor-challenge', { code: '000000' });
    assert.equal(response?.statusCode, 429);
    assert.ok(Number(response.headers['retry-after']) > 0);
  });

  it('POST /two-factor-challenge without a pending challenge: the 422 envelope on code', async () => {
    const response = await call(await start(), 'POST', '/two-factor-challenge', { code: '123456' });
    assert.equal(response.statusCode, 422);
    assert.ok((response.json() as { errors: Record<string, string[]> }).errors.code);
  });

  it('POST /logout: 401 for a guest, 419 without the header, 204 signed in', async () => {
    const user = await createUser(t.app);
    assert.equal((await call(await start(), 'POST', '/logout')).statusCode, 401);
    const jar = await signedIn(user.email, user.plainPassword);
    assert.equal((await call(jar, 'POST', '/logout', undefined, null)).statusCode, 419);
    assert.equal((await call(jar, 'POST', '/logout')).statusCode, 204);
    assert.equal((await call(jar, 'GET', '/user/confirmed-password-status')).statusCode, 401, 'signed out');
  });

  it('POST /register: 204 signed in, 422 for a taken email or bad fields, 419 without the header', async () => {
    const taken = await createUser(t.app);
    const fields = { name: 'Spa Contract', email: 'spa-contract@example.com', password: 'contract-password-1', password_confirmation: 'contract-password-1' };
    assert.equal((await call(await start(), 'POST', '/register', { ...fields, email: taken.email })).statusCode, 422);
    assert.equal((await call(await start(), 'POST', '/register', { name: '', email: 'x' })).statusCode, 422);
    assert.equal((await call(await start(), 'POST', '/register', fields, null)).statusCode, 419);
    const jar = await start();
    assert.equal((await call(jar, 'POST', '/register', fields)).statusCode, 204);
    assert.equal((await call(jar, 'GET', '/user/confirmed-password-status')).statusCode, 200, 'signed in');
  });

  it('POST /forgot-password: 204 for any address, 422 for a bad one, 419 without the header', async () => {
    const jar = await start();
    assert.equal((await call(jar, 'POST', '/forgot-password', { email: 'nobody-here@example.com' })).statusCode, 204);
    assert.equal((await call(jar, 'POST', '/forgot-password', { email: 'not-an-email' })).statusCode, 422);
    assert.equal((await call(jar, 'POST', '/forgot-password', { email: 'nobody-here@example.com' }, null)).statusCode, 419);
  });

  it('POST /reset-password: 422 for a wrong token, 204 with the right one, 419 without the header', async () => {
    const user = await createUser(t.app);
    const token = 'spa-contract-reset-token';
    await t.db.kysely.insertInto('password_reset_tokens').values({ email: user.email.toLowerCase(), token: hashSecret(token), created_at: new Date().toISOString() }).execute();
    const fields = { token, email: user.email, password: 'contract-reset-1', password_confirmation: 'contract-reset-1' };
    const jar = await start();
    assert.equal((await call(jar, 'POST', '/reset-password', { ...fields, token: 'wrong' })).statusCode, 422);
    assert.equal((await call(jar, 'POST', '/reset-password', fields, null)).statusCode, 419);
    assert.equal((await call(jar, 'POST', '/reset-password', fields)).statusCode, 204);
  });

  it('POST /user/confirm-password and GET /user/confirmed-password-status: 401 for a guest, 422 wrong password, 204, then confirmed', async () => {
    const user = await createUser(t.app);
    const guest = await start();
    assert.equal((await call(guest, 'POST', '/user/confirm-password', { password: 'whatever-1' })).statusCode, 401);
    assert.equal((await call(guest, 'GET', '/user/confirmed-password-status')).statusCode, 401);
    const jar = await signedIn(user.email, user.plainPassword);
    assert.deepEqual((await call(jar, 'GET', '/user/confirmed-password-status')).json(), { confirmed: false });
    assert.equal((await call(jar, 'POST', '/user/confirm-password', { password: 'wrong-password' })).statusCode, 422);
    assert.equal((await call(jar, 'POST', '/user/confirm-password', { password: user.plainPassword }, null)).statusCode, 419);
    assert.equal((await call(jar, 'POST', '/user/confirm-password', { password: user.plainPassword })).statusCode, 204);
    assert.deepEqual((await call(jar, 'GET', '/user/confirmed-password-status')).json(), { confirmed: true });
  });

  it('POST /user/confirm-password: the 429 envelope with Retry-After after too many wrong passwords', async () => {
    const user = await createUser(t.app);
    const jar = await signedIn(user.email, user.plainPassword);
    let response: LightMyRequestResponse | undefined;
    for (let i = 0; i < 7 && response?.statusCode !== 429; i += 1) response = await call(jar, 'POST', '/user/confirm-password', { password: 'wrong-password' });
    assert.equal(response?.statusCode, 429);
    assert.ok(Number(response.headers['retry-after']) > 0);
  });

  it('POST /email/verification-notification: 401 for a guest, 204 signed in, 429 after too many sends', async () => {
    const user = await createUser(t.app, { verified: false });
    assert.equal((await call(await start(), 'POST', '/email/verification-notification')).statusCode, 401);
    const jar = await signedIn(user.email, user.plainPassword);
    assert.equal((await call(jar, 'POST', '/email/verification-notification')).statusCode, 204);
    let response: LightMyRequestResponse | undefined;
    for (let i = 0; i < 8 && response?.statusCode !== 429; i += 1) response = await call(jar, 'POST', '/email/verification-notification');
    assert.equal(response?.statusCode, 429);
    assert.ok(Number(response.headers['retry-after']) > 0);
  });
});
