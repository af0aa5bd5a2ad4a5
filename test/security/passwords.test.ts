// The password rules wherever a password is set — PUT /api/user/password, registration, reset
// by mailed link, the profile form: at least 8 characters, 64 and up to 1024 accepted, never
// truncated, none of the 10,000 most common. And a bcrypt hash from a Laravel import never
// lets a password longer than bcrypt's 72 bytes in on its first 72.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { commonPasswordCount, isCommonPassword } from '../../src/modules/passwords/common-passwords.js';
import { bearer, buildTestApp, createUser, issueToken, type TestApp } from '../helpers.js';
import { WebClient } from '../support/client.js';
import { linkIn, startMailServer, type MailServer } from '../web/mail-server.js';
import { login } from '../web/support.js';

const TOO_SHORT = 'The password field must be at least 8 characters.';
const TOO_LONG = 'The password field must not be greater than 1024 characters.';
const TOO_COMMON = 'The password is too common; choose a less guessable one.';

type Outcome = { accepted: boolean; body: string };
/** Sets `password` for a fresh account through one of the ways a password is set. */
type Setter = (password: string) => Promise<Outcome>;

const hundred = (at90: string) => `${'k7#Qw'.repeat(17)}${'x'.repeat(4)}${at90}${'z'.repeat(10)}`;

describe('password rules wherever a password is set', () => {
  let mail: MailServer;
  let t: TestApp;
  let counter = 0;
  const fresh = () => `pw-${(counter += 1)}-${Date.now()}@example.com`;
  const OLD = 'an old passphrase 1';

  before(async () => {
    mail = await startMailServer();
    t = await buildTestApp(mail.env);
  });
  after(async () => {
    await t.app.services.mail.settled();
    await t.close();
    await mail.close();
  });

  const setters: Record<string, Setter> = {
    'PUT /api/user/password': async (password) => {
      const user = await createUser(t.app, { email: fresh(), password: OLD });
      const token = await issueToken(t.app, user.email, OLD);
      const response = await t.app.inject({
        method: 'PUT',
        url: '/api/user/password',
        headers: bearer(token),
        payload: { current_password: OLD, password, password_confirmation: password },
      });
      return { accepted: response.statusCode === 204, body: response.body };
    },
    'POST /register': async (password) => {
      const client = new WebClient(t.app);
      await client.get('/register');
      const response = await client.post('/register', { name: 'P', email: fresh(), password, password_confirmation: password });
      return { accepted: response.statusCode === 303, body: response.body };
    },
    'POST /reset-password': async (password) => {
      const user = await createUser(t.app, { email: fresh(), password: OLD });
      const client = new WebClient(t.app);
      await client.get('/forgot-password');
      await client.post('/forgot-password', { email: user.email });
      await t.app.services.mail.settled();
      const link = new URL(linkIn(mail.to(user.email).at(-1)!, 'http://localhost:3000/reset-password/'));
      await client.get(`${link.pathname}${link.search}`);
      const token = decodeURIComponent(link.pathname.split('/').pop()!);
      const response = await client.post('/reset-password', { token, email: user.email, password, password_confirmation: password });
      return { accepted: response.statusCode === 303, body: response.body };
    },
    'POST /profile/password': async (password) => {
      const user = await createUser(t.app, { email: fresh(), password: OLD });
      const client = new WebClient(t.app);
      await login(client, user.email, OLD);
      await client.get('/profile');
      const response = await client.post('/profile/password', { current_password: OLD, password, password_confirmation: password });
      return { accepted: response.statusCode === 303, body: response.body };
    },
  };

  const cases: Array<[string, string, string | null]> = [
    ['7 characters', 'q7#Lm2v', TOO_SHORT],
    ['8 characters', 'q7#Lm2vX', null],
    ['8 emoji, 16 UTF-16 units (characters are counted, not units)', '🔑🔐🔓🗝🔏🛡🧷🪪', null],
    ['64 characters', 'Ab3$'.repeat(16), null],
    ['1024 characters', 'Zq9!'.repeat(256), null],
    ['1025 characters', `${'Zq9!'.repeat(256)}x`, TOO_LONG],
    ['a common password ("baseball")', 'baseball', TOO_COMMON],
    ['a common password in other case ("PassWord1")', 'PassWord1', TOO_COMMON],
    ['a common password of digits ("12345678")', '12345678', TOO_COMMON],
    ['a common password ("qwertyuiop")', 'qwertyuiop', TOO_COMMON],
  ];

  for (const [way, set] of Object.entries(setters)) {
    for (const [name, password, message] of cases) {
      it(`${way}: ${message === null ? 'accepts' : 'refuses'} ${name}`, async () => {
        const outcome = await set(password);
        assert.equal(outcome.accepted, message === null, outcome.body.slice(0, 400));
        if (message !== null) assert.ok(outcome.body.includes(message.replace("'", '&#39;')) || outcome.body.includes(message), `says "${message}"`);
      });
    }
  }

  it('never truncates: two 100-character passwords that differ only at character 90 are different passwords', async () => {
    const first = hundred('A');
    const second = hundred('B');
    assert.equal(first.length, 100);
    assert.equal(first.slice(0, 89), second.slice(0, 89));
    const user = await createUser(t.app, { email: fresh(), password: OLD });
    const token = await issueToken(t.app, user.email, OLD);
    const change = await t.app.inject({ method: 'PUT', url: '/api/user/password', headers: bearer(token), payload: { current_password: OLD, password: first, password_confirmation: first } });
    assert.equal(change.statusCode, 204);
    const attempt = (password: string) => t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password, device_name: 'd' } });
    assert.equal((await attempt(second)).statusCode, 401);
    assert.equal((await attempt(first.slice(0, 72))).statusCode, 401);
    assert.equal((await attempt(first)).statusCode, 200);
  });
});

describe('bcrypt hashes from a Laravel import and the 72-byte limit', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const importUser = async (email: string, password: string) => {
    const user = await createUser(t.app, { email });
    // As Laravel stores it: $2y$, cost 10; bcrypt itself reads only the first 72 bytes.
    const hash = bcrypt.hashSync(password, 10).replace(/^\$2b\$/, '$2y$');
    await t.db.kysely.updateTable('users').set({ password: hash }).where('id', '=', user.id).execute();
    return user;
  };
  const attempt = (email: string, password: string) => t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password, device_name: 'd' } });
  const storedHash = async (email: string) => (await t.app.services.users.findByEmail(email))!.password ?? '';

  it('refuses a password longer than 72 bytes against a bcrypt hash instead of comparing its first 72 bytes', async () => {
    const long = hundred('A');
    await importUser('long-bcrypt@example.com', long);
    assert.equal((await attempt('long-bcrypt@example.com', hundred('B'))).statusCode, 401, 'a different password with the same first 72 bytes');
    assert.equal((await attempt('long-bcrypt@example.com', long)).statusCode, 401, 'the long password itself (its owner resets it)');
    assert.match(await storedHash('long-bcrypt@example.com'), /^\$2y\$/, 'nothing was rehashed');
  });

  it('counts bytes, not characters: 25 three-byte characters are 75 bytes', async () => {
    const password = '€'.repeat(25);
    await importUser('euro-bcrypt@example.com', password);
    assert.equal((await attempt('euro-bcrypt@example.com', password)).statusCode, 401);
  });

  it('accepts a password of exactly 72 bytes and rehashes it to argon2id, after which only the whole password works', async () => {
    const password = 'p'.repeat(71) + 'Q';
    await importUser('exact-bcrypt@example.com', password);
    assert.equal((await attempt('exact-bcrypt@example.com', password)).statusCode, 200);
    assert.match(await storedHash('exact-bcrypt@example.com'), /^\$argon2id\$/);
    assert.equal((await attempt('exact-bcrypt@example.com', password)).statusCode, 200);
    assert.equal((await attempt('exact-bcrypt@example.com', `${password}extra`)).statusCode, 401);
  });
});

describe('the shipped list of common passwords', () => {
  it('holds 10,000 passwords and is matched without regard to case', () => {
    assert.equal(commonPasswordCount(), 10_000);
    for (const password of ['123456', 'password', 'iloveyou', 'Dragon', 'TRUSTNO1']) assert.ok(isCommonPassword(password), password);
    for (const password of ['correct horse battery staple', 'k7#Qw-unusual', '']) assert.ok(!isCommonPassword(password), password);
  });
});
