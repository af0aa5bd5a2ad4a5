// Email verification: the notice, the resend action (6 a minute), the signed expiring link
// /email/verify/{id}/{sha1(email)} (tampered or expired → 403 page), and MUST_VERIFY_EMAIL
// deciding whether /profile needs it.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { checkSignature, signedUrl } from '../../src/modules/verification/signed-url.js';
import { buildTestApp, createUser, type TestApp } from '../helpers.js';
import { WebClient, alertText, decodeEntities, statusMessage } from '../support/client.js';
import { linkIn, type MailServer } from './mail-server.js';
import { appWithMail, closeAppWithMail, login, mainOf, sessionIdOf } from './support.js';

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

describe('email verification (MUST_VERIFY_EMAIL=true)', () => {
  let mail: MailServer;
  let t: TestApp;
  let counter = 0;

  before(async () => {
    ({ t, mail } = await appWithMail({ MUST_VERIFY_EMAIL: 'true' }));
  });
  after(() => closeAppWithMail(t, mail));

  /** An unverified user, logged in on a new client. */
  const unverified = async () => {
    counter += 1;
    const user = await createUser(t.app, { email: `unverified-${counter}@example.com`, verified: false });
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    return { user, client };
  };

  /** Asks for a verification mail and returns the path of its link. */
  const mailedPath = async (client: WebClient, email: string) => {
    await client.get('/email/verify');
    const response = await client.post('/email/verification-notification');
    assert.equal(response.statusCode, 303);
    await t.app.services.mail.settled();
    const messages = mail.to(email);
    const url = new URL(linkIn(messages[messages.length - 1]!, 'http://localhost:3000/email/verify/'));
    return `${url.pathname}${url.search}`;
  };

  const verifiedAt = async (id: number) => (await t.app.services.users.findById(id))?.email_verified_at ?? null;

  it('sends an unverified user from /profile to /email/verify, but lets them into /dashboard', async () => {
    const { client } = await unverified();
    const profile = await client.get('/profile');
    assert.equal(profile.statusCode, 302);
    assert.equal(profile.headers.location, '/email/verify');
    assert.equal((await client.get('/dashboard')).statusCode, 200);
  });

  it('shows the notice with a resend button and a logout button', async () => {
    const { client } = await unverified();
    const response = await client.get('/email/verify');
    assert.equal(response.statusCode, 200);
    // Nothing says a link was "just emailed": the notice is also where a user lands days later.
    assert.match(response.body, /To verify your email address, .* open the link we send to it\./);
    assert.doesNotMatch(response.body, /just emailed/);
    assert.match(response.body, /action="\/email\/verification-notification"/);
    assert.match(response.body, /action="\/logout"/);
  });

  it('keeps visitors off the notice (302 to /login)', async () => {
    const response = await t.app.inject({ url: '/email/verify' });
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/login');
  });

  it('resends the link on request: 303 back to the notice with a status, and a mail', async () => {
    const { user, client } = await unverified();
    await client.get('/email/verify');
    const response = await client.post('/email/verification-notification');
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/email/verify');
    assert.equal(decodeEntities(statusMessage((await client.follow(response)).body) ?? ''), `A verification link has been sent to ${user.email}. It is valid for 60 minutes.`);
    await t.app.services.mail.settled();
    const [message] = mail.to(user.email);
    assert.equal(message?.subject, 'Verify email address');
    assert.ok(message?.html.includes('/email/verify/'), 'the HTML part carries the link too');
  });

  it('resends at most 6 times a minute, then answers 429 with the seconds left', async () => {
    const { user, client } = await unverified();
    await client.get('/email/verify');
    for (let i = 0; i < 6; i += 1) assert.equal((await client.post('/email/verification-notification')).statusCode, 303);
    const seventh = await client.post('/email/verification-notification');
    assert.equal(seventh.statusCode, 429);
    assert.match(alertText(seventh.body) ?? '', /^Too many requests\. Please try again in \d+ seconds\.$/);
    await t.app.services.mail.settled();
    assert.equal(mail.to(user.email).length, 6);
  });

  it('verifies with the mailed link: 303 to /dashboard with a status, a new session id, and /profile opens', async () => {
    const { user, client } = await unverified();
    const path = await mailedPath(client, user.email);
    assert.match(path, new RegExp(`^/email/verify/${user.id}/${sha1(user.email)}\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    const before = sessionIdOf(client);
    const response = await client.get(path);
    assert.equal(response.statusCode, 303);
    assert.equal(response.headers.location, '/dashboard');
    assert.notEqual(sessionIdOf(client), before);
    assert.equal(statusMessage((await client.follow(response)).body), 'Your email address has been verified.');
    assert.notEqual(await verifiedAt(user.id), null);
    assert.equal((await client.get('/profile')).statusCode, 200);
  });

  it('brings a logged-out visitor through the login page back to the link', async () => {
    const { user, client } = await unverified();
    const path = await mailedPath(client, user.email);
    const visitor = new WebClient(t.app);
    const first = await visitor.get(path);
    assert.equal(first.statusCode, 302);
    assert.equal(first.headers.location, '/login');
    await visitor.follow(first);
    const loggedIn = await visitor.post('/login', { email: user.email, password: user.plainPassword });
    assert.equal(loggedIn.headers.location, path);
    assert.equal((await visitor.follow(loggedIn)).statusCode, 303);
    assert.notEqual(await verifiedAt(user.id), null);
  });

  const forged: { name: string; change: (path: string, id: number) => string; message: RegExp }[] = [
    { name: 'a changed signature', change: (path) => path.replace(/signature=([0-9a-f])/, (_m, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`), message: /This verification link is invalid\./ },
    { name: 'no signature', change: (path) => path.replace(/&signature=[0-9a-f]+/, ''), message: /This verification link is invalid\./ },
    { name: 'a later expiry', change: (path) => path.replace(/expires=(\d+)/, (_m, n: string) => `expires=${Number(n) + 3600}`), message: /This verification link is invalid\./ },
    { name: 'another hash', change: (path) => path.replace(/\/[0-9a-f]{40}\?/, `/${sha1('someone@else.example')}?`), message: /This verification link is invalid\./ },
    { name: 'an extra query parameter', change: (path) => `${path}&admin=1`, message: /This verification link is invalid\./ },
  ];
  for (const c of forged) {
    it(`answers a link with ${c.name} with a 403 page and verifies nothing`, async () => {
      const { user, client } = await unverified();
      const path = c.change(await mailedPath(client, user.email), user.id);
      const response = await client.get(path);
      assert.equal(response.statusCode, 403);
      assert.match(String(response.headers['content-type']), /text\/html/);
      assert.match(mainOf(response.body), c.message);
      assert.equal(await verifiedAt(user.id), null);
    });
  }

  it("answers another user's valid link with 403", async () => {
    const alice = await unverified();
    const bob = await unverified();
    const alicePath = await mailedPath(alice.client, alice.user.email);
    const response = await bob.client.get(alicePath);
    assert.equal(response.statusCode, 403);
    assert.equal(await verifiedAt(alice.user.id), null);
    assert.equal(await verifiedAt(bob.user.id), null);
  });

  it('answers an expired link (signed, past its 60 minutes) with 403 and says so', async () => {
    const { user, client } = await unverified();
    const signed = t.app.services.verification.verificationUrl(user);
    const expires = Math.floor(Date.now() / 1000) - 1;
    // Re-signed with the app's key for an expiry in the past: only the time is wrong.
    const { deriveKey } = await import('../../src/modules/shared/keys.js');
    const url = new URL(signedUrl(deriveKey(t.config.appKey, 'signed-urls'), 'http://localhost:3000', new URL(signed).pathname, new Date(expires * 1000)));
    const response = await client.get(`${url.pathname}${url.search}`);
    assert.equal(response.statusCode, 403);
    assert.match(mainOf(response.body), /This verification link has expired\./);
    assert.equal(await verifiedAt(user.id), null);
  });

  it('makes a link mailed to an old address useless after an email change', async () => {
    const { user, client } = await unverified();
    const path = await mailedPath(client, user.email);
    // Changed around the pending flow (as the panel may): the old link must still die.
    await t.db.kysely.updateTable('users').set({ email: `changed-${user.email}` }).where('id', '=', user.id).execute();
    const response = await client.get(path);
    assert.equal(response.statusCode, 403);
  });

  it('sends an already verified user from the notice to /dashboard', async () => {
    const user = await createUser(t.app, { email: 'already@example.com', verified: true });
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    const response = await client.get('/email/verify');
    assert.equal(response.statusCode, 302);
    assert.equal(response.headers.location, '/dashboard');
  });
});

describe('MUST_VERIFY_EMAIL=false (the default)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('opens /profile to an unverified user', async () => {
    const user = await createUser(t.app, { email: 'relaxed@example.com', verified: false });
    const client = new WebClient(t.app);
    await login(client, user.email, user.plainPassword);
    assert.equal((await client.get('/profile')).statusCode, 200);
  });
});

describe('signed URLs', () => {
  const key = Buffer.alloc(32, 1);
  const base = 'https://app.example';
  const now = Date.parse('2026-11-22T10:00:00Z');

  it('accepts its own URL until it expires', () => {
    const url = new URL(signedUrl(key, base, '/email/verify/1/abc', new Date(now + 60_000)));
    const path = `${url.pathname}${url.search}`;
    assert.equal(checkSignature(key, base, path, now), 'valid');
    assert.equal(checkSignature(key, base, path, now + 60_000), 'expired');
  });

  const cases: { name: string; check: (path: string) => ReturnType<typeof checkSignature> }[] = [
    { name: 'another key', check: (path) => checkSignature(Buffer.alloc(32, 2), base, path, now) },
    { name: 'another base URL (APP_URL)', check: (path) => checkSignature(key, 'https://evil.example', path, now) },
    { name: 'another path', check: (path) => checkSignature(key, base, path.replace('/1/', '/2/'), now) },
  ];
  for (const c of cases) {
    it(`refuses a URL checked with ${c.name}`, () => {
      const url = new URL(signedUrl(key, base, '/email/verify/1/abc', new Date(now + 60_000)));
      assert.equal(c.check(`${url.pathname}${url.search}`), 'invalid');
    });
  }
});
