// The password of an account is one secret behind three doors (the site's login, the panel's,
// POST /api/tokens): its wrong tries from a client are counted once, so the doors do not each give
// a guesser their own allowance (as the two-factor codes already share one count).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';

const PASSWORD = 'one-count-password-1';

describe('the wrong passwords of an account are counted once across the site, the panel and the API', () => {
  let t: TestApp;

  before(async () => {
    // The API's own limit is on (the tests' default turns it off).
    t = await buildTestApp({ LOG_LEVEL: 'error', LOGIN_RATE_LIMIT: '5' });
  });
  after(() => t.close());

  const siteTry = async (email: string, password: string) => {
    const client = new WebClient(t.app);
    await client.get('/login');
    return client.post('/login', { email, password });
  };
  const panelTry = async (email: string, password: string) => {
    const client = new WebClient(t.app);
    await client.get('/admin/login');
    return client.post('/admin/login', { email, password });
  };
  const apiTry = (email: string, password: string) =>
    t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password, device_name: 'guesser' } });

  it('five wrong on the site: the API answers 429 to the right password', async () => {
    const user = await createUser(t.app, { password: PASSWORD });
    for (let i = 0; i < 5; i += 1) assert.equal((await siteTry(user.email, `wrong ${i}`)).statusCode, 422);
    assert.equal((await apiTry(user.email, PASSWORD)).statusCode, 429);
  });

  it("five wrong through the API: the site's and the panel's logins refuse an administrator's right password", async () => {
    const admin = await createUser(t.app, { password: PASSWORD, admin: true });
    for (let i = 0; i < 5; i += 1) assert.equal((await apiTry(admin.email, `wrong ${i}`)).statusCode, 401);
    assert.equal((await siteTry(admin.email, PASSWORD)).statusCode, 429);
    assert.equal((await panelTry(admin.email, PASSWORD)).statusCode, 429);
  });
});
