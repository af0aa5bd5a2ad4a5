// Login throttling: 5 failures per email + IP in a minute, then 429 with auth.throttle and the
// seconds left, and no password checked; look-alike spellings of the email share the bucket.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { MemoryThrottleStore, Throttle, throttleEmail } from '../../src/modules/throttle/throttle.js';
import { buildTestApp, createTestDatabase, createUser, testConfig, type TestApp } from '../helpers.js';
import { WebClient, fieldError } from '../support/client.js';
import { isLoggedIn } from './support.js';

const THROTTLE = /^Too many login attempts\. Please try again in (\d+) seconds\.$/;

describe('login throttling', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  let ipCounter = 0;
  let ip = '';

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t.app, { email: 'admin@example.com', password: 'right-password-42' });
  });
  after(() => t.close());
  // Each test its own address, so that buckets of earlier tests do not leak in.
  beforeEach(() => {
    ipCounter += 1;
    ip = `10.0.0.${ipCounter}`;
  });

  const attempt = async (email: string, password: string, from = ip) => {
    const client = new WebClient(t.app, { remoteAddress: from });
    await client.get('/login');
    const response = await client.post('/login', { email, password });
    return { client, response };
  };

  const fail = async (times: number, email = user.email, from = ip) => {
    for (let i = 0; i < times; i += 1) {
      const { response } = await attempt(email, 'wrong-password', from);
      assert.equal(response.statusCode, 422, `failure ${i + 1} is an ordinary 422`);
    }
  };

  it('answers the sixth attempt within a minute with 429, auth.throttle on email and the seconds left', async () => {
    await fail(5);
    const { response } = await attempt(user.email, 'wrong-password');
    assert.equal(response.statusCode, 429);
    const message = fieldError(response.body, 'email');
    assert.ok(message !== null);
    const seconds = Number(THROTTLE.exec(message)?.[1]);
    assert.ok(seconds >= 1 && seconds <= 60, message);
    assert.equal(response.headers['retry-after'], String(seconds));
  });

  it('checks no password while throttled: even the right one is refused', async () => {
    await fail(5);
    const { client, response } = await attempt(user.email, user.plainPassword);
    assert.equal(response.statusCode, 429);
    assert.equal(await isLoggedIn(client), false);
  });

  it('shares one bucket between ⓐdmin@…, ADMIN@… and admin@…', async () => {
    await fail(2, 'ADMIN@EXAMPLE.COM');
    await fail(2, 'ⓐdmin@example.com');
    await fail(1, 'Ádmin@example.com');
    const { response } = await attempt('admin@example.com', user.plainPassword);
    assert.equal(response.statusCode, 429);
  });

  it('keeps buckets apart for another IP and for another email', async () => {
    await fail(5);
    const otherIp = await attempt(user.email, user.plainPassword, '10.9.9.9');
    assert.equal(otherIp.response.statusCode, 303);
    const otherEmail = await attempt('someone-else@example.com', 'wrong-password');
    assert.equal(otherEmail.response.statusCode, 422);
  });

  it('forgets the failures after a successful login', async () => {
    await fail(4);
    assert.equal((await attempt(user.email, user.plainPassword)).response.statusCode, 303);
    await fail(4);
    assert.equal((await attempt(user.email, user.plainPassword)).response.statusCode, 303);
  });

  it('says auth.throttle in French to a French visitor', async () => {
    await fail(5);
    const client = new WebClient(t.app, { remoteAddress: ip, headers: { 'accept-language': 'fr' } });
    await client.get('/login');
    const response = await client.post('/login', { email: user.email, password: 'wrong-password' });
    assert.equal(response.statusCode, 429);
    assert.match(fieldError(response.body, 'email') ?? '', /^Tentatives de connexion trop nombreuses\. Veuillez essayer de nouveau dans \d+ secondes\.$/);
  });
});

describe('login throttling across instances', () => {
  // Two instances on one database (a SQLite file both open, or one PostgreSQL schema) with
  // RATE_LIMIT_STORE=database: an attacker spreading guesses over them still gets five a minute.
  it('counts the failures made on either instance together: the sixth is refused on both', async () => {
    const database = await createTestDatabase({ file: true });
    const config = testConfig({ RATE_LIMIT_STORE: 'database' });
    const a = await buildApp(config, { db: database.db });
    const b = await buildApp(config, { db: database.connectAgain() });
    try {
      const user = await createUser(a, { password: 'right-password-42' });
      const login = async (app: FastifyInstance, password: string) => {
        const client = new WebClient(app, { remoteAddress: '10.20.0.1' });
        await client.get('/login');
        return (await client.post('/login', { email: user.email, password })).statusCode;
      };
      const statuses: number[] = [];
      for (const app of [a, b, a, b, a]) statuses.push(await login(app, 'wrong-password'));
      assert.deepEqual(statuses, [422, 422, 422, 422, 422]);
      assert.equal(await login(b, user.plainPassword), 429, 'the sixth attempt, on the instance that saw two');
      assert.equal(await login(a, user.plainPassword), 429);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });
});

describe('Throttle and the memory store', () => {
  it('lets maxAttempts through in a window, refuses the next, and opens again when the window closes', async () => {
    let now = 1_000_000;
    const throttle = new Throttle(new MemoryThrottleStore(), () => now);
    for (let i = 0; i < 5; i += 1) assert.deepEqual(await throttle.attempt('k', 5, 60), { limited: false });
    assert.deepEqual(await throttle.attempt('k', 5, 60), { limited: true, retryAfterSeconds: 60 });
    now += 59_500;
    assert.deepEqual(await throttle.attempt('k', 5, 60), { limited: true, retryAfterSeconds: 1 });
    now += 500;
    assert.deepEqual(await throttle.attempt('k', 5, 60), { limited: false });
  });

  it('does not push the window back with attempts made while limited', async () => {
    let now = 0;
    const throttle = new Throttle(new MemoryThrottleStore(), () => now);
    for (let i = 0; i < 6; i += 1) await throttle.attempt('k', 5, 60);
    now = 30_000;
    assert.deepEqual(await throttle.attempt('k', 5, 60), { limited: true, retryAfterSeconds: 30 });
  });

  it('clears a key', async () => {
    const throttle = new Throttle(new MemoryThrottleStore());
    for (let i = 0; i < 6; i += 1) await throttle.attempt('k', 5, 60);
    await throttle.clear('k');
    assert.deepEqual(await throttle.check('k', 5), { limited: false });
  });

  it('sweeps closed windows before growing past its threshold', async () => {
    const store = new MemoryThrottleStore();
    for (let i = 0; i < 10_000; i += 1) await store.hit(`old-${i}`, 1_000, 0);
    assert.equal(store.size, 10_000);
    await store.hit('new', 1_000, 5_000);
    assert.equal(store.size, 1);
  });
});

describe('throttleEmail', () => {
  const cases: [string, string][] = [
    ['admin@example.com', 'admin@example.com'],
    ['ADMIN@EXAMPLE.COM', 'admin@example.com'],
    ['ⓐdmin@example.com', 'admin@example.com'],
    ['Ⓐdmin@example.com', 'admin@example.com'],
    ['ａｄｍｉｎ@example.com', 'admin@example.com'],
    ['Ádmin@exämple.com', 'admin@example.com'],
  ];
  for (const [input, expected] of cases) {
    it(`maps ${input} to ${expected}`, () => assert.equal(throttleEmail(input), expected));
  }
});
