// The account rules as the API faces meet them (issue 24 §2): an email change through
// PUT /api/user is a pending change confirmed from the new address and needs the current
// password, from a token as from a first-party SPA session; the name stays immediate.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createUser, issueToken, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { linkIn, startMailServer, type MailServer, type ReceivedMail } from '../web/mail-server.js';
import { isLoggedIn, login } from '../web/support.js';
import { CookieJar, TEST_LOGIN_PATH, buildStatefulApp } from './stateful-support.js';

const APP = 'http://localhost:3000';
const SPA = 'http://localhost:5173';
const PASSWORD = 'account-rules-password-1';

describe('account rules through the API', () => {
  let mail: MailServer;
  let t: TestApp;
  let counter = 0;

  before(async () => {
    mail = await startMailServer();
    t = await buildStatefulApp({ ...mail.env, SANCTUM_STATEFUL_DOMAINS: 'localhost:5173', LOG_LEVEL: 'error' });
  });
  after(async () => {
    await t.close();
    await mail.close();
  });

  const newUser = async () => {
    counter += 1;
    return createUser(t.app, { email: `api-owner-${counter}@example.com`, password: PASSWORD });
  };
  const row = (id: number) => t.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const pendingRow = (id: number) => t.db.kysely.selectFrom('email_changes').selectAll().where('user_id', '=', id).executeTakeFirst();
  const mailsTo = async (address: string): Promise<ReceivedMail[]> => {
    await t.app.services.mail.settled();
    return mail.to(address);
  };
  const put = (token: string, payload: object) => t.app.inject({ method: 'PUT', url: '/api/user', headers: bearer(token), payload });

  /** A first-party SPA session (XSRF cookie, then the test-only login) and its write headers. */
  const spaSession = async (userId: number) => {
    const jar = new CookieJar();
    jar.take(await t.app.inject({ url: '/sanctum/csrf-cookie', headers: { origin: SPA } }));
    jar.take(await t.app.inject({ method: 'POST', url: `${TEST_LOGIN_PATH}/${userId}`, headers: { origin: SPA, cookie: jar.header() } }));
    return () => ({ origin: SPA, cookie: jar.header(), 'x-xsrf-token': decodeURIComponent(jar.get('XSRF-TOKEN') ?? ''), accept: 'application/json' });
  };

  describe('PUT /api/user with a new email', () => {
    it('answers 202 with the user unchanged and pending_email; the link mailed to the new address makes the change, verified', async () => {
      const user = await newUser();
      const token = await issueToken(t.app, user.email, PASSWORD);
      const next = `next-${user.email}`;
      const response = await put(token, { email: next, current_password: PASSWORD });
      assert.equal(response.statusCode, 202, response.body);
      const body = response.json() as Record<string, unknown>;
      assert.equal(body.email, user.email);
      assert.equal(body.pending_email, next);
      assert.equal((await row(user.id)).email, user.email, 'nothing changes before the link');
      assert.equal((await pendingRow(user.id))?.new_email, next);

      const [confirm] = await mailsTo(next);
      assert.ok(confirm, 'a link to the new address');
      const [notice] = await mailsTo(user.email);
      assert.ok(notice, 'a notice to the old address');
      assert.match(linkIn(notice, `${APP}/email/change/`), /\/cancel\//);

      const link = new URL(linkIn(confirm, `${APP}/email/change/`));
      const browser = new WebClient(t.app);
      await browser.get(link.pathname);
      const done = await browser.post(link.pathname);
      assert.equal(done.statusCode, 303);
      const changed = await row(user.id);
      assert.equal(changed.email, next);
      assert.notEqual(changed.email_verified_at, null);
    });

    it('changes the name at once and the address only through the link, in one call', async () => {
      const user = await newUser();
      const token = await issueToken(t.app, user.email, PASSWORD);
      const response = await put(token, { name: 'Renamed At Once', email: `both-${user.email}`, current_password: PASSWORD });
      assert.equal(response.statusCode, 202);
      assert.equal(response.json().name, 'Renamed At Once');
      const stored = await row(user.id);
      assert.equal(stored.name, 'Renamed At Once');
      assert.equal(stored.email, user.email);
    });

    const refusals: Array<[string, object, string]> = [
      ['without current_password', {}, 'The current password field is required.'],
      ['with an empty current_password', { current_password: '' }, 'The current password field is required.'],
      ['with a wrong current_password', { current_password: 'not the password' }, 'The password is incorrect.'],
    ];
    for (const [name, extra, message] of refusals) {
      it(`refuses it ${name} with 422 on current_password, and changes, records and mails nothing`, async () => {
        const user = await newUser();
        const token = await issueToken(t.app, user.email, PASSWORD);
        const response = await put(token, { name: 'Not Saved', email: `refused-${user.email}`, ...extra });
        assert.equal(response.statusCode, 422);
        assert.deepEqual(response.json(), { message, errors: { current_password: [message] } });
        const stored = await row(user.id);
        assert.equal(stored.email, user.email);
        assert.notEqual(stored.name, 'Not Saved');
        assert.equal(await pendingRow(user.id), undefined);
        assert.equal((await mailsTo(`refused-${user.email}`)).length, 0);
      });
    }

    it('throttles the password check: the sixth try in a minute is 429 even with the right password', async () => {
      const user = await newUser();
      const token = await issueToken(t.app, user.email, PASSWORD);
      for (let i = 0; i < 5; i += 1) assert.equal((await put(token, { email: `guess-${user.email}`, current_password: `wrong ${i}` })).statusCode, 422);
      const sixth = await put(token, { email: `guess-${user.email}`, current_password: PASSWORD });
      assert.equal(sixth.statusCode, 429);
      assert.ok(Number(sixth.headers['retry-after']) > 0);
      assert.ok(sixth.json().errors.current_password);
      assert.equal(await pendingRow(user.id), undefined);
    });

    it('counts the tries of an IPv6 client by its /64: another address of the same network is still throttled', async () => {
      const user = await newUser();
      const token = await issueToken(t.app, user.email, PASSWORD);
      const from = (address: string, current_password: string) =>
        t.app.inject({ method: 'PUT', url: '/api/user', headers: bearer(token), payload: { email: `v6-${user.email}`, current_password }, remoteAddress: address });
      for (let i = 0; i < 5; i += 1) assert.equal((await from(`2001:db8:1:2::${i + 1}`, `wrong ${i}`)).statusCode, 422);
      assert.equal((await from('2001:db8:1:2::99', PASSWORD)).statusCode, 429);
      assert.equal((await from('2001:db8:1:3::1', PASSWORD)).statusCode, 202, 'another network is not limited');
    });

    it('asks a first-party SPA session for the password too, and only records a pending change', async () => {
      const user = await newUser();
      const headers = await spaSession(user.id);
      const without = await t.app.inject({ method: 'PUT', url: '/api/user', headers: headers(), payload: { email: `spa-${user.email}` } });
      assert.equal(without.statusCode, 422);
      assert.ok(without.json().errors.current_password);
      const withPassword = await t.app.inject({ method: 'PUT', url: '/api/user', headers: headers(), payload: { email: `spa-${user.email}`, current_password: PASSWORD } });
      assert.equal(withPassword.statusCode, 202, withPassword.body);
      assert.equal((await row(user.id)).email, user.email);
      assert.equal((await pendingRow(user.id))?.new_email, `spa-${user.email}`);
    });

    it('answers 200 without asking for a password when the email is the current one', async () => {
      const user = await newUser();
      const token = await issueToken(t.app, user.email, PASSWORD);
      const response = await put(token, { name: 'Same Address', email: user.email });
      assert.equal(response.statusCode, 200);
      assert.equal(response.json().pending_email, undefined);
    });
  });
  // Abilities guard the account: a token with a list of abilities changes the account only
  // with user:write; `*` tokens and first-party sessions keep every ability.
  describe('the user:write ability', () => {
    const FORBIDDEN = { message: 'This action is unauthorized.', errors: {} };
    const calls: Array<[string, (token: string, user: { email: string }) => Promise<{ statusCode: number; body: string }>]> = [
      ['PUT /api/user', (token) => put(token, { name: 'Taken Over' })],
      ['PUT /api/user/password', (token) =>
        t.app.inject({ method: 'PUT', url: '/api/user/password', headers: bearer(token), payload: { current_password: PASSWORD, password: 'taken over password 9', password_confirmation: 'taken over password 9' } })],
      ['DELETE /api/tokens', (token) => t.app.inject({ method: 'DELETE', url: '/api/tokens', headers: bearer(token) })],
    ];
    const tokenWith = async (abilities: string[]) => {
      const user = await newUser();
      const token = await t.app.services.tokens.issue(user.id, 'scoped', abilities);
      const other = await t.app.services.tokens.issue(user.id, 'other', ['posts:read']);
      return { user, token: token.plaintext, other: other.plaintext };
    };

    for (const [name, call] of calls) {
      for (const abilities of [['posts:read'], ['posts:read', 'posts:write'], []]) {
        it(`refuses ${name} with 403 to a token with ${JSON.stringify(abilities)}, and changes nothing`, async () => {
          const { user, token, other } = await tokenWith(abilities);
          const before = await row(user.id);
          const response = await call(token, user);
          assert.equal(response.statusCode, 403, response.body);
          assert.deepEqual(JSON.parse(response.body), FORBIDDEN);
          const after = await row(user.id);
          assert.equal(after.name, before.name);
          assert.equal(after.password, before.password);
          assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(other) })).statusCode, 200, 'no token revoked');
        });
      }
      for (const abilities of [['user:write'], ['posts:read', 'user:write'], ['*']]) {
        it(`lets a token with ${JSON.stringify(abilities)} call ${name}`, async () => {
          const { user, token } = await tokenWith(abilities);
          const response = await call(token, user);
          assert.ok([200, 204].includes(response.statusCode), `${response.statusCode} ${response.body}`);
        });
      }
    }

    it('refuses a read-only token\'s email change with 403 before any password is looked at', async () => {
      const { user, token } = await tokenWith(['posts:read']);
      const response = await put(token, { email: 'eve@evil.example', current_password: PASSWORD });
      assert.equal(response.statusCode, 403);
      assert.equal((await row(user.id)).email, user.email);
      assert.equal(await pendingRow(user.id), undefined);
      assert.equal((await mailsTo('eve@evil.example')).length, 0);
    });

    it('says in the OpenAPI document which ability each account route needs', async () => {
      const document = (await t.app.inject({ url: '/api/openapi.json' })).json() as { paths: Record<string, Record<string, { description?: string }>> };
      for (const [path, method] of [['/api/user', 'put'], ['/api/user/password', 'put'], ['/api/tokens', 'delete']] as const) {
        assert.match(document.paths[path]?.[method]?.description ?? '', /`user:write`/, `${method} ${path}`);
      }
    });
  });
  // A password change through the API ends every other way in, as /profile does (defect 3):
  // browser sessions, remember-me devices, other tokens; the caller's own token or SPA session stays.
  describe('PUT /api/user/password', () => {
    const NEW_PASSWORD = 'the new password 42';
    const changePassword = (headers: Record<string, string>, current = PASSWORD) =>
      t.app.inject({ method: 'PUT', url: '/api/user/password', headers, payload: { current_password: current, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD } });
    const count = async (table: 'remember_tokens' | 'personal_access_tokens' | 'sessions', userId: number) =>
      Number((await t.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);

    /** A user signed in on a remembered browser, with two API tokens. */
    const everywhere = async () => {
      const user = await newUser();
      const browser = new WebClient(t.app);
      await login(browser, user.email, PASSWORD, { remember: '1' });
      assert.equal(await count('remember_tokens', user.id), 1);
      const caller = await issueToken(t.app, user.email, PASSWORD, 'caller');
      const other = await issueToken(t.app, user.email, PASSWORD, 'other');
      return { user, browser, caller, other };
    };

    it('from a token: ends every browser session and remember-me device and the other tokens, keeps the calling token', async () => {
      const { user, browser, caller, other } = await everywhere();
      const response = await changePassword(bearer(caller));
      assert.equal(response.statusCode, 204, response.body);
      assert.equal(await isLoggedIn(browser), false, 'the browser is out, and its remember-me cookie does not bring it back');
      assert.equal(await count('remember_tokens', user.id), 0);
      assert.equal(await count('sessions', user.id), 0);
      assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(other) })).statusCode, 401);
      assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(caller) })).statusCode, 200);
    });

    it('from a first-party SPA session: keeps that session, ends the other browser sessions and every token', async () => {
      const { user, browser, caller, other } = await everywhere();
      const spa = await spaSession(user.id);
      const response = await changePassword(spa());
      assert.equal(response.statusCode, 204, response.body);
      assert.equal((await t.app.inject({ url: '/api/user', headers: spa() })).statusCode, 200, 'the SPA stays signed in');
      assert.equal(await isLoggedIn(browser), false);
      assert.equal(await count('remember_tokens', user.id), 0);
      assert.equal(await count('sessions', user.id), 1);
      for (const token of [caller, other]) assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(token) })).statusCode, 401);
    });

    it('is throttled as on /profile: the sixth try in a minute is 429 even with the right password, and nothing ends', async () => {
      const { user, browser, caller, other } = await everywhere();
      for (let i = 0; i < 5; i += 1) assert.equal((await changePassword(bearer(caller), `wrong ${i}`)).statusCode, 422);
      const sixth = await changePassword(bearer(caller));
      assert.equal(sixth.statusCode, 429);
      assert.ok(sixth.json().errors.current_password);
      assert.equal(await isLoggedIn(browser), true);
      assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(other) })).statusCode, 200);
      assert.equal(await count('remember_tokens', user.id), 1);
    });
  });
});
