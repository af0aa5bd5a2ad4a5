// The current password asked by /profile's password change is an oracle to whoever holds the
// session: its tries are counted per account and client as the sign-in pipeline and the API count
// them, an IPv6 client by its /64, so changing addresses inside one's own network buys no guesses;
// and in one count with the password confirmation, so two forms asking for it give no more guesses than one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { login } from './support.js';

const PASSWORD = 'profile-tries-password-1';

describe("/profile's password change counts tries by client", () => {
  let t: TestApp;

  before(async () => {
    t = await buildTestApp({ LOG_LEVEL: 'error' });
  });
  after(() => t.close());

  it('limits a /64 as one client: five wrong tries from five addresses, the sixth from a sixth is 429', async () => {
    const user = await createUser(t.app, { password: PASSWORD });
    const client = new WebClient(t.app);
    await login(client, user.email, PASSWORD);
    await client.get('/profile');
    const from = (remoteAddress: string, current: string) =>
      t.app.inject({
        method: 'POST',
        url: '/profile/password',
        remoteAddress,
        headers: { cookie: client.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _token: client.csrf!, current_password: current, password: 'a new password 12345', password_confirmation: 'a new password 12345' }).toString(),
      });
    for (let i = 0; i < 5; i += 1) assert.equal((await from(`2001:db8:7:2::${i + 1}`, `wrong ${i}`)).statusCode, 422);
    assert.equal((await from('2001:db8:7:2::99', PASSWORD)).statusCode, 429);
    const row = await t.db.kysely.selectFrom('users').select('password').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(row.password, user.password, 'nothing changed');
    assert.equal((await from('2001:db8:7:3::1', PASSWORD)).statusCode, 303, 'another network is not limited');
  });

  it('counts the current password once, whichever form asks for it: wrong confirmations limit the password change', async () => {
    const user = await createUser(t.app, { password: PASSWORD });
    const client = new WebClient(t.app);
    await login(client, user.email, PASSWORD);
    await client.get('/user/confirm-password');
    for (let i = 0; i < 5; i += 1) assert.equal((await client.post('/user/confirm-password', { password: `wrong ${i}` })).statusCode, 422);
    assert.equal((await client.post('/user/confirm-password', { password: PASSWORD })).statusCode, 429);
    await client.get('/profile');
    const change = await client.post('/profile/password', { current_password: PASSWORD, password: 'a new password 12345', password_confirmation: 'a new password 12345' });
    assert.equal(change.statusCode, 429, 'the sixth guess at the password, through another form');
    const row = await t.db.kysely.selectFrom('users').select('password').where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(row.password, user.password);
  });
});
