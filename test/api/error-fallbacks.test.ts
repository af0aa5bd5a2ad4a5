// The error answers of last resort: an error the handler cannot describe, and Fastify's own
// failures before routing (an undecodable URL, a path parameter over its length limit). None
// repeats internals or the URL; a script gets the envelope, under /api and on the site alike.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createTestDatabase, testConfig, type TestDatabase } from '../helpers.js';

const LONG = 'a'.repeat(200);

describe('error answers of last resort', () => {
  let database: TestDatabase;
  let app: FastifyInstance;

  before(async () => {
    database = await createTestDatabase();
    app = await buildApp(testConfig(), { db: database.db });
    // A validation failure in a shape nothing expects, as a plugin could throw it.
    app.get('/api/__malformed-validation', { config: { auth: 'public' } }, async () => {
      throw Object.assign(new Error('internal detail'), { validation: [null] });
    });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await database.drop();
  });

  it('answers 500 with the generic envelope when the error cannot be described, not with the failure', async () => {
    const response = await app.inject({ url: '/api/__malformed-validation' });
    assert.equal(response.statusCode, 500);
    assert.equal(response.body, '{"message":"Server Error.","errors":{}}');
  });

  it('answers a path parameter over its length limit with 414 and a message that does not repeat the URL', async () => {
    const api = await app.inject({ url: `/api/posts/${LONG}` });
    assert.equal(api.statusCode, 414);
    assert.equal(api.body, '{"message":"URI Too Long.","errors":{}}');
    const page = await app.inject({ method: 'POST', url: `/admin/posts/${LONG}/publish`, headers: { accept: 'text/html' } });
    assert.equal(page.statusCode, 414);
    assert.match(String(page.headers['content-type']), /^text\/plain/);
    assert.equal(page.body, 'URI Too Long.');
  });

  it('answers a script on a site page with the envelope for a URL that does not decode, a browser with plain text', async () => {
    for (const headers of [{ accept: 'application/json' }, { 'x-requested-with': 'XMLHttpRequest' }]) {
      const script = await app.inject({ url: '/profile/%E0%A4%A', headers });
      assert.equal(script.statusCode, 400);
      assert.match(String(script.headers['content-type']), /^application\/json/);
      assert.equal(script.body, '{"message":"The request could not be understood.","errors":{}}');
    }
    const browser = await app.inject({ url: '/profile/%E0%A4%A', headers: { accept: 'text/html' } });
    assert.equal(browser.statusCode, 400);
    assert.equal(browser.body, 'The request could not be understood.');
  });
});
