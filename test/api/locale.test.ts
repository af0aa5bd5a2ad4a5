// API messages follow the visitor's language as pages do (Accept-Language, French for `fr`):
// the envelope keeps its shape {message, errors} and its field names; English stays the default
// and keeps the specification's exact texts; only error answers are translated.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { bearer, buildTestApp, createUser, issueToken, type TestApp } from '../helpers.js';

type Envelope = { message: string; errors: Record<string, string[]> };

const FRENCH = { 'accept-language': 'fr' };

describe('API messages in the visitor’s language', () => {
  let t: TestApp;
  let token: string;
  let readOnly: string;
  let another: string;
  let ip = 0;

  before(async () => {
    t = await buildTestApp({ API_RATE_LIMIT: '3' });
    const user = await createUser(t.app, { email: 'locale@example.com', password: 'locale-password-1' });
    token = await issueToken(t.app, user.email, 'locale-password-1');
    readOnly = (await t.app.services.tokens.issue(user.id, 'read', ['posts:read'])).plaintext;
    // API_RATE_LIMIT counts per token: each case that needs one has its own.
    another = (await t.app.services.tokens.issue(user.id, 'password', ['*'])).plaintext;
  });
  after(() => t.close());

  /** Each request from its own address, so that only the 429 case meets the limit. */
  const call = async (options: InjectOptions, headers: Record<string, string> = {}) => {
    ip += 1;
    const response = await t.app.inject({ ...options, headers: { accept: 'application/json', ...options.headers, ...headers }, remoteAddress: `10.18.0.${ip}` });
    return { status: response.statusCode, body: response.json() as Envelope, vary: String(response.headers.vary ?? '') };
  };

  const cases: { name: string; request: () => InjectOptions; status: number; en: Envelope; fr: Envelope }[] = [
    {
      name: '401 without a token',
      request: () => ({ url: '/api/user' }),
      status: 401,
      en: { message: 'Unauthenticated.', errors: {} },
      fr: { message: 'Non authentifié.', errors: {} },
    },
    {
      name: '401 on wrong credentials',
      request: () => ({ method: 'POST', url: '/api/tokens', payload: { email: 'locale@example.com', password: 'wrong-password', device_name: 'cli' } }),
      status: 401,
      en: { message: 'The provided credentials are incorrect.', errors: {} },
      fr: { message: 'Les identifiants fournis sont incorrects.', errors: {} },
    },
    {
      name: '422 with a message per field',
      request: () => ({ method: 'POST', url: '/api/tokens', payload: { email: 'not-an-email', password: 'x' } }),
      status: 422,
      en: {
        message: 'The email field must be a valid email address.',
        errors: { email: ['The email field must be a valid email address.'], device_name: ['The device name field is required.'] },
      },
      fr: {
        message: 'Le champ adresse e-mail doit être une adresse e-mail valide.',
        errors: { email: ['Le champ adresse e-mail doit être une adresse e-mail valide.'], device_name: ["Le champ nom de l'appareil est obligatoire."] },
      },
    },
    {
      name: '422 written by a handler (a status only administrators may ask for)',
      request: () => ({ url: '/api/posts?status=draft' }),
      status: 422,
      en: { message: 'The selected status is invalid.', errors: { status: ['The selected status is invalid.'] } },
      fr: { message: 'La valeur sélectionnée pour statut est invalide.', errors: { status: ['La valeur sélectionnée pour statut est invalide.'] } },
    },
    {
      name: '422 from the password rules of PUT /api/user/password',
      request: () => ({ method: 'PUT', url: '/api/user/password', headers: bearer(another), payload: { current_password: 'locale-password-1', password: 'short', password_confirmation: 'other' } }),
      status: 422,
      en: {
        message: 'The password field must be at least 8 characters.',
        errors: { password: ['The password field must be at least 8 characters.', 'The password field confirmation does not match.'] },
      },
      fr: {
        message: 'Le champ mot de passe doit contenir au moins 8 caractères.',
        errors: { password: ['Le champ mot de passe doit contenir au moins 8 caractères.', 'La confirmation du champ mot de passe ne correspond pas.'] },
      },
    },
    {
      name: '403 for a token without the ability',
      request: () => ({ method: 'DELETE', url: '/api/posts/anything', headers: bearer(readOnly) }),
      status: 403,
      en: { message: 'This action is unauthorized.', errors: {} },
      fr: { message: 'Cette action n’est pas autorisée.', errors: {} },
    },
    {
      name: '404 for an unknown post',
      request: () => ({ url: '/api/posts/no-such-post' }),
      status: 404,
      en: { message: 'Not Found.', errors: {} },
      fr: { message: 'Introuvable.', errors: {} },
    },
    {
      name: '404 for an unknown API path',
      request: () => ({ url: '/api/nothing-here' }),
      status: 404,
      en: { message: 'Not Found.', errors: {} },
      fr: { message: 'Introuvable.', errors: {} },
    },
    {
      name: '400 for a body that is not JSON',
      request: () => ({ method: 'POST', url: '/api/tokens', headers: { 'content-type': 'application/json' }, payload: '{"email":' }),
      status: 400,
      en: { message: 'The request body is not valid JSON.', errors: {} },
      fr: { message: 'Le corps de la requête n’est pas du JSON valide.', errors: {} },
    },
  ];

  for (const test of cases) {
    it(`answers ${test.name} in French for Accept-Language: fr, in English without it, in the same envelope`, async () => {
      const none = await call(test.request());
      const english = await call(test.request(), { 'accept-language': 'en-GB,en;q=0.9' });
      const french = await call(test.request(), FRENCH);
      for (const answer of [none, english, french]) assert.equal(answer.status, test.status);
      assert.deepEqual(none.body, test.en, 'no header: the specification’s English');
      assert.deepEqual(english.body, test.en);
      assert.deepEqual(french.body, test.fr);
      assert.deepEqual(Object.keys(french.body), ['message', 'errors']);
      assert.deepEqual(Object.keys(french.body.errors), Object.keys(none.body.errors), 'the same fields');
      // A shared cache may keep an error (a 404): it must not serve one language's to another.
      for (const answer of [none, french]) assert.match(answer.vary, /(^|, )Accept-Language($|,)/);
    });
  }

  it('answers 429 in French, with the same rate-limit headers', async () => {
    const request = (headers: Record<string, string>) => t.app.inject({ url: '/api/posts', headers: { accept: 'application/json', ...headers }, remoteAddress: '10.18.1.1' });
    for (let i = 0; i < 3; i += 1) assert.equal((await request({})).statusCode, 200);
    const english = await request({});
    const french = await request({ 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.5' });
    assert.equal(french.statusCode, 429);
    assert.deepEqual(english.json(), { message: 'Too Many Attempts.', errors: {} });
    assert.deepEqual(french.json(), { message: 'Trop de tentatives.', errors: {} });
    assert.ok(french.headers['retry-after'], 'Retry-After is kept');
  });

  it('follows the ranking of Accept-Language and stays in English for a language it does not offer', async () => {
    assert.equal((await call({ url: '/api/user' }, { 'accept-language': 'de-DE,fr;q=0.8,en;q=0.5' })).body.message, 'Non authentifié.');
    assert.equal((await call({ url: '/api/user' }, { 'accept-language': 'en;q=0.9,fr;q=0.8' })).body.message, 'Unauthenticated.');
    assert.equal((await call({ url: '/api/user' }, { 'accept-language': 'de' })).body.message, 'Unauthenticated.');
    assert.equal((await call({ url: '/api/user' }, { 'accept-language': '*' })).body.message, 'Unauthenticated.');
  });

  it('leaves successful answers as they are, whatever the language asked for', async () => {
    const english = await t.app.inject({ url: '/api/user', headers: bearer(token), remoteAddress: '10.18.2.1' });
    const french = await t.app.inject({ url: '/api/user', headers: { ...bearer(token), ...FRENCH }, remoteAddress: '10.18.2.2' });
    assert.equal(french.statusCode, 200);
    assert.equal(french.body, english.body);
    assert.equal(french.headers['content-language'], undefined);
  });
});
