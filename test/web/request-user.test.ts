// A signed-in page reads its user's row once: the web guard reads it for the session, and the
// page hooks and handlers that need the row (the profile form, the security page's sections,
// the "Set a password" choice) use that read instead of their own (plugins/web-guard.ts
// userOfRequest). A change the request makes is still read afresh where the handler asks again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { login } from './support.js';

describe('the signed-in user read once a request', () => {
  let t: TestApp;
  let client: WebClient;
  let reads = 0;

  before(async () => {
    t = await buildTestApp();
    const user = await createUser(t.app, { name: 'Once Reader', email: 'once@example.com' });
    client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const users = t.app.services.users;
    const findById = users.findById.bind(users);
    users.findById = (id) => {
      reads += 1;
      return findById(id);
    };
  });
  after(() => t.close());

  for (const path of ['/dashboard', '/profile', '/security', '/user/api-tokens']) {
    it(`reads the user's row once for ${path}`, async () => {
      await client.get(path);
      reads = 0;
      const page = await client.get(path);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /action="\/logout"/);
      assert.equal(reads, 1);
    });
  }

  it('shows a change of the profile on the next page', async () => {
    await client.get('/profile');
    const saved = await client.post('/profile', { name: 'Renamed Reader', email: 'once@example.com' });
    assert.equal(saved.statusCode, 303);
    assert.match((await client.follow(saved)).body, /value="Renamed Reader"/);
  });
});
