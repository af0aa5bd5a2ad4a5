// Every failure under /api is the JSON envelope {message, errors}, whatever the Accept header.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createTestDatabase, testConfig, type TestDatabase } from '../helpers.js';

const HTML = { accept: 'text/html,application/xhtml+xml' };
const JSON_TYPE = { 'content-type': 'application/json', ...HTML };

describe('errors under /api', () => {
  let database: TestDatabase;
  let app: FastifyInstance;

  before(async () => {
    database = await createTestDatabase();
    app = await buildApp(testConfig({ BODY_LIMIT: '1024' }), { db: database.db });
    // Routes that fail the way bugs do: an Error with internals in its message, a thrown
    // non-Error, and an error object that claims a 5xx with its own text.
    app.get('/api/__boom', { config: { auth: 'public' } }, async () => {
      throw new Error('secret internals: password=hunter2 at /srv/app.ts:12');
    });
    app.get('/api/__throw-string', { config: { auth: 'public' } }, async () => {
      throw 'a bare string with internals';
    });
    app.get('/api/__bad-gateway', { config: { auth: 'public' } }, async () => {
      throw Object.assign(new Error('upstream said: secret'), { statusCode: 502 });
    });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await database.drop();
  });

  type Case = { name: string; method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; url: string; headers?: Record<string, string>; payload?: string; status: number; message: string; allow?: string };
  const cases: Case[] = [
    { name: 'an unknown route', method: 'GET', url: '/api/nope', status: 404, message: 'Not Found.' },
    { name: 'an unknown nested route', method: 'POST', url: '/api/user/nope/deeper', status: 404, message: 'Not Found.' },
    { name: 'the bare /api prefix', method: 'GET', url: '/api', status: 404, message: 'Not Found.' },
    { name: 'a wrong method on /api/tokens', method: 'PATCH', url: '/api/tokens', status: 405, message: 'Method Not Allowed.', allow: 'POST, DELETE' },
    { name: 'a wrong method on /api/user', method: 'POST', url: '/api/user', status: 405, message: 'Method Not Allowed.', allow: 'GET, PUT' },
    { name: 'a wrong method on /api/settings', method: 'DELETE', url: '/api/settings', status: 405, message: 'Method Not Allowed.', allow: 'GET' },
    { name: 'a wrong method on /api/posts/{slug}', method: 'POST', url: '/api/posts/some-slug', status: 405, message: 'Method Not Allowed.', allow: 'GET, PUT, DELETE' },
    { name: 'a wrong method on /api/tokens/current', method: 'GET', url: '/api/tokens/current', status: 405, message: 'Method Not Allowed.', allow: 'DELETE' },
    { name: 'malformed JSON', method: 'POST', url: '/api/tokens', headers: JSON_TYPE, payload: '{"email": "a@example.com",', status: 400, message: 'The request body is not valid JSON.' },
    { name: 'JSON with a __proto__ key', method: 'POST', url: '/api/tokens', headers: JSON_TYPE, payload: '{"__proto__": {"is_admin": 1}}', status: 400, message: 'The request body is not valid JSON.' },
    { name: 'JSON with a constructor.prototype key', method: 'POST', url: '/api/tokens', headers: JSON_TYPE, payload: '{"constructor": {"prototype": {"x": 1}}}', status: 400, message: 'The request body is not valid JSON.' },
    { name: 'a JSON body over BODY_LIMIT', method: 'POST', url: '/api/tokens', headers: JSON_TYPE, payload: JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(2000), device_name: 'd' }), status: 413, message: 'The request body is too large.' },
    { name: 'a form body over BODY_LIMIT', method: 'POST', url: '/api/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded', ...HTML }, payload: `password=${'x'.repeat(2000)}`, status: 413, message: 'The request body is too large.' },
    { name: 'an XML body', method: 'POST', url: '/api/tokens', headers: { 'content-type': 'application/xml', ...HTML }, payload: '<email>a@example.com</email>', status: 415, message: 'Unsupported Media Type.' },
    { name: 'a text/plain body', method: 'POST', url: '/api/tokens', headers: { 'content-type': 'text/plain', ...HTML }, payload: 'email=a@example.com', status: 415, message: 'Unsupported Media Type.' },
    { name: 'a multipart body', method: 'POST', url: '/api/tokens', headers: { 'content-type': 'multipart/form-data; boundary=x', ...HTML }, payload: '--x--', status: 415, message: 'Unsupported Media Type.' },
    { name: 'a validation failure', method: 'POST', url: '/api/tokens', headers: JSON_TYPE, payload: '{}', status: 422, message: 'The email field is required.' },
    { name: 'a missing token', method: 'GET', url: '/api/user', status: 401, message: 'Unauthenticated.' },
    { name: 'an unknown post', method: 'GET', url: '/api/posts/unknown', status: 404, message: 'Not Found.' },
    { name: 'an unexpected exception', method: 'GET', url: '/api/__boom', status: 500, message: 'Server Error.' },
    { name: 'a thrown non-Error', method: 'GET', url: '/api/__throw-string', status: 500, message: 'Server Error.' },
  ];

  for (const c of cases) {
    it(`answers ${c.status} JSON for ${c.name}, even to Accept: text/html`, async () => {
      const response = await app.inject({ method: c.method, url: c.url, headers: c.headers ?? HTML, payload: c.payload });
      assert.equal(response.statusCode, c.status);
      assert.match(String(response.headers['content-type']), /^application\/json/);
      const body = response.json() as { message: string; errors: Record<string, string[]> };
      assert.deepEqual(Object.keys(body).sort(), ['errors', 'message']);
      assert.equal(body.message, c.message);
      if (c.status !== 422) assert.deepEqual(body.errors, {});
      if (c.allow !== undefined) assert.equal(response.headers.allow, c.allow);
    });
  }

  it('answers 500 with a generic message: no stack, no internals', async () => {
    for (const url of ['/api/__boom', '/api/__throw-string']) {
      const response = await app.inject({ url, headers: HTML });
      assert.equal(response.body, '{"message":"Server Error.","errors":{}}');
    }
  });

  it('keeps 5xx messages generic whatever the error claims', async () => {
    const response = await app.inject({ url: '/api/__bad-gateway' });
    assert.equal(response.statusCode, 502);
    assert.doesNotMatch(response.body, /upstream|secret/);
    assert.deepEqual(Object.keys(response.json()).sort(), ['errors', 'message']);
  });

  it('keeps answering after failures: nothing crashes the process', async () => {
    for (let i = 0; i < 3; i += 1) await app.inject({ url: '/api/__boom' });
    const up = await app.inject({ url: '/up' });
    assert.equal(up.statusCode, 200);
    const settings = await app.inject({ url: '/api/settings' });
    assert.equal(settings.statusCode, 200);
  });

  it('accepts a body just under BODY_LIMIT', async () => {
    const payload = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(900), device_name: 'd' });
    assert.ok(Buffer.byteLength(payload) < 1024);
    const response = await app.inject({ method: 'POST', url: '/api/tokens', headers: { 'content-type': 'application/json' }, payload });
    assert.equal(response.statusCode, 401);
  });

  it('treats an empty JSON body as no body, so the validator names the required fields', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/tokens', headers: { 'content-type': 'application/json' }, payload: '' });
    assert.equal(response.statusCode, 422);
    assert.deepEqual(Object.keys(response.json().errors), ['email', 'password', 'device_name']);
  });

  it('accepts an HTML-form body, as Laravel does', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/tokens',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'email=nobody%40example.com&password=x&device_name=d',
    });
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().message, 'The provided credentials are incorrect.');
  });
});
