// The session cookie's signature is checked on every request, even though the answer for a cookie
// already seen is kept (plugins/session.ts, KeptSigner): a cookie altered in its id or its
// signature, or one whose session has ended, opens nothing, before and after the genuine cookie
// was accepted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { login } from './support.js';

describe('session cookie signature', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app, { email: 'signed-cookie@example.com' });
  });
  after(() => t.close());

  /** A signed-in client and its session cookie, decoded (`<id>.<signature>`). */
  async function signedIn(): Promise<{ client: WebClient; cookie: string }> {
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const raw = client.cookies.get(SESSION_COOKIE);
    assert.ok(raw !== undefined);
    return { client, cookie: decodeURIComponent(raw) };
  }

  /** The status of /dashboard with this session cookie and nothing else. */
  async function dashboardWith(cookie: string): Promise<number> {
    const response = await t.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie: `${SESSION_COOKIE}=${encodeURIComponent(cookie)}` } });
    return response.statusCode;
  }

  /** The same text with its character at `index` changed to another one of the same alphabet. */
  function altered(text: string, index: number): string {
    const at = index < 0 ? text.length + index : index;
    const replacement = text[at] === 'A' ? 'B' : 'A';
    return text.slice(0, at) + replacement + text.slice(at + 1);
  }

  it('opens the account with the genuine cookie, again and again', async () => {
    const { cookie } = await signedIn();
    for (let i = 0; i < 3; i += 1) assert.equal(await dashboardWith(cookie), 200);
  });

  it('refuses the cookie with its signature altered, after the genuine one was accepted', async () => {
    const { cookie } = await signedIn();
    assert.equal(await dashboardWith(cookie), 200);
    assert.notEqual(await dashboardWith(altered(cookie, -1)), 200);
    assert.notEqual(await dashboardWith(altered(cookie, cookie.lastIndexOf('.') + 1)), 200);
    assert.notEqual(await dashboardWith(`${cookie}A`), 200);
    assert.equal(await dashboardWith(cookie), 200);
  });

  it("refuses another session's id under the first session's signature", async () => {
    const first = await signedIn();
    const second = await signedIn();
    assert.equal(await dashboardWith(first.cookie), 200);
    assert.equal(await dashboardWith(second.cookie), 200);
    const secondId = second.cookie.slice(0, second.cookie.lastIndexOf('.'));
    const firstSignature = first.cookie.slice(first.cookie.lastIndexOf('.'));
    assert.notEqual(await dashboardWith(`${secondId}${firstSignature}`), 200);
    assert.notEqual(await dashboardWith(altered(first.cookie, 0)), 200);
  });

  it('refuses the genuine cookie once its session has ended', async () => {
    const { client, cookie } = await signedIn();
    assert.equal(await dashboardWith(cookie), 200);
    await client.get('/dashboard');
    assert.equal((await client.post('/logout')).statusCode, 303);
    assert.notEqual(await dashboardWith(cookie), 200);
  });
});
