// Answers that hold a secret or one caller's data are never cached; public reads may be.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, buildTestApp, createUser, issueToken, type TestApp } from '../helpers.js';

describe('Cache-Control on API answers', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await buildTestApp();
    const user = await createUser(t.app);
    token = await issueToken(t.app, user.email, user.plainPassword);
  });
  after(() => t.close());

  it('sends no-store with a newly issued token', async () => {
    const user = await createUser(t.app);
    const response = await t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: user.plainPassword, device_name: 'x' } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['cache-control'], 'no-store');
  });

  for (const [method, url] of [['GET', '/api/user'], ['PUT', '/api/user']] as const) {
    it(`sends no-store on ${method} ${url} for an authenticated caller`, async () => {
      const response = await t.app.inject({ method, url, headers: bearer(token), ...(method === 'PUT' ? { payload: { name: 'Same' } } : {}) });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], 'no-store');
    });
  }

  it('leaves public reads cacheable (ETag, no no-store)', async () => {
    const response = await t.app.inject({ url: '/api/settings' });
    assert.equal(response.statusCode, 200);
    assert.notEqual(response.headers['cache-control'], 'no-store');
    assert.ok(response.headers.etag);
  });
});
