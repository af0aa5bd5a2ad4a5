// The rate-limit store going away while the service runs. Password and token-issue limits never
// fail open: with Redis stopped (or the database's rate_limits table gone) every credential check
// keeps counting in the process's own memory, logs one warning, and refuses the 6th attempt;
// the general API request limit alone lets requests through (it protects capacity). GET /up says
// the store is down ("degraded", still 200) and up again, and the limits go back to the store.
// Each test stops a redis-server of this file's own, on a free port: the shared one on 6379 is
// never touched.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import bcrypt from 'bcryptjs';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { rateLimitNamespace } from '../../src/modules/rate-limit/redis.js';
import { createTestDatabase, createUser, testConfig, type TestDatabase } from '../helpers.js';
import { freePort } from '../support/browser.js';
import { WebClient } from '../support/client.js';
import { OwnRedis } from '../support/redis-server.js';
import { skipWithoutRedisServer } from '../support/services.js';
import { login } from '../web/support.js';

const TOO_MANY = '{"message":"Too Many Attempts.","errors":{}}';
const THROTTLE_WARNING = 'throttle store failed; counting in this process only';
const OPEN_WARNING = 'rate limit store failed; request not limited';

const skip = skipWithoutRedisServer();

type Running = { app: FastifyInstance; database: TestDatabase; appKey: Buffer; warnings(message: string): number; log(): string; close(): Promise<void> };

/** An app on a fresh database with `env`, its own APP_KEY, and its warn lines captured. */
async function start(env: Record<string, string>): Promise<Running> {
  const database = await createTestDatabase();
  const appKey = randomBytes(32);
  const lines: string[] = [];
  const config = testConfig({ APP_KEY: `base64:${appKey.toString('base64')}`, LOG_LEVEL: 'warn', ...env });
  const app = await buildApp(config, {
    db: database.db,
    loggerStream: { write: (line: string) => void lines.push(line) },
    mailer: { send: async () => undefined, close: () => undefined },
  });
  await app.ready();
  return {
    app,
    database,
    appKey,
    warnings: (message) => lines.filter((line) => (JSON.parse(line) as { msg?: string }).msg === message).length,
    log: () => lines.join(''),
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}

/** Checks `predicate` every 50 ms until it holds; fails after `tries` checks (a count, not a clock). */
async function until(what: string, predicate: () => Promise<boolean> | boolean, tries = 400): Promise<void> {
  for (let tried = 1; !(await predicate()); tried += 1) {
    assert.ok(tried < tries, `${what} after ${tried} checks`);
    await sleep(50);
  }
}

let ipCounter = 0;
const freshIp = () => `10.77.${(ipCounter >> 8) & 255}.${++ipCounter & 255}`;

const tokenAttempt = (app: FastifyInstance, email: string, password: string, ip: string) =>
  app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password, device_name: 'd' }, remoteAddress: ip, headers: { accept: 'application/json' } });

function assertTooMany(response: LightMyRequestResponse, limit: number): void {
  assert.equal(response.statusCode, 429, response.body);
  assert.equal(response.body, TOO_MANY);
  assert.equal(response.headers['x-ratelimit-limit'], String(limit));
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
}

const up = async (app: FastifyInstance) => {
  const response = await app.inject({ url: '/up' });
  return { status: response.statusCode, body: response.json() as unknown };
};

/** A user whose stored hash is Laravel's bcrypt: a password check that succeeds rehashes it to argon2id. */
async function laravelUser(running: Running, password: string) {
  const user = await createUser(running.app, { password: 'placeholder password' });
  const hash = (await bcrypt.hash(password, 4)).replace(/^\$2b\$/, '$2y$');
  await running.database.db.kysely.updateTable('users').set({ password: hash }).where('id', '=', user.id).execute();
  const storedHash = async () => (await running.database.db.kysely.selectFrom('users').select('password').where('id', '=', user.id).executeTakeFirstOrThrow()).password;
  return { user, hash, storedHash };
}

/**
 * Seven wrong passwords for one email from one IP, then the right one: 401 five times, then 429
 * with the envelope, and the right password is refused too, unchecked (its hash is not upgraded).
 */
async function assertCredentialLimitHolds(running: Running): Promise<void> {
  const password = 'right password 123';
  const { user, hash, storedHash } = await laravelUser(running, password);
  const ip = freshIp();
  const responses: LightMyRequestResponse[] = [];
  for (let i = 0; i < 7; i += 1) responses.push(await tokenAttempt(running.app, user.email, 'wrong', ip));
  assert.deepEqual(
    responses.map((r) => r.statusCode),
    [401, 401, 401, 401, 401, 429, 429],
  );
  assertTooMany(responses[5]!, 5);
  assertTooMany(await tokenAttempt(running.app, user.email, password, ip), 5);
  assert.equal(await storedHash(), hash, 'the right password was not even checked');
}

describe('the rate-limit store going away while the service runs', { skip }, () => {
  let redis: OwnRedis;
  let running: Running | null = null;

  before(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
  });
  after(async () => {
    await running?.close();
    await redis?.stop();
  });

  /** An app on this file's Redis, which is (re)started first when a test before stopped it. */
  async function onRedis(env: Record<string, string> = {}): Promise<Running> {
    await done();
    if (!redis.running) await redis.start();
    running = await start({ RATE_LIMIT_STORE: 'redis', REDIS_URL: redis.url, API_RATE_LIMIT: '60', LOGIN_RATE_LIMIT: '5', ...env });
    return running;
  }

  async function done(): Promise<void> {
    await running?.close();
    running = null;
  }

  /** Stops Redis and waits until the app's client has seen the connection go. */
  async function stopRedis(app: FastifyInstance): Promise<void> {
    await redis.stop();
    await until('the client notices', () => app.services.redis?.status !== 'ready');
  }

  it('refuses the 6th wrong password on POST /api/tokens with 429 while Redis is stopped, checks no password then, and warns once', async () => {
    const t = await onRedis();
    assert.deepEqual(await up(t.app), { status: 200, body: { status: 'ok', database: true, rate_limit_store: { kind: 'redis', ok: true } } });
    await stopRedis(t.app);
    await assertCredentialLimitHolds(t);
    assert.equal(t.warnings(THROTTLE_WARNING), 1, t.log());
    assert.equal(t.warnings(OPEN_WARNING), 0, 'no limit on this route was switched off');
    assert.doesNotMatch(t.log(), /@example\.com/, 'no address is logged');
    await done();
  });

  it('reports the store down on /up (200, degraded), then up once Redis is back, and counts in Redis again', async () => {
    const t = await onRedis({ API_RATE_LIMIT: '2' });
    await stopRedis(t.app);
    assert.deepEqual(await up(t.app), { status: 200, body: { status: 'degraded', database: true, rate_limit_store: { kind: 'redis', ok: false } } });
    await redis.start();
    await until('/up says the store is back', async () => ((await up(t.app)).body as { status: string }).status === 'ok');
    assert.deepEqual(await up(t.app), { status: 200, body: { status: 'ok', database: true, rate_limit_store: { kind: 'redis', ok: true } } });

    // The restarted Redis started empty: what it holds now was counted after its return.
    const namespace = rateLimitNamespace(t.appKey);
    const ip = freshIp();
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await t.app.inject({ url: '/api/posts', remoteAddress: ip })).statusCode);
    assert.deepEqual(statuses, [200, 200, 429], 'the request limit holds again');
    const account = await createUser(t.app);
    assert.equal((await tokenAttempt(t.app, account.email, 'wrong', freshIp())).statusCode, 401);
    const keys = await redis.keys(`${namespace}*`);
    assert.ok(keys.some((key) => key.endsWith(`ip:${ip}`)), `the request limit counts in Redis: ${keys.join(', ')}`);
    assert.ok(keys.some((key) => key.startsWith(`${namespace}throttle:`)), `the credential limit counts in Redis: ${keys.join(', ')}`);
    await done();
  });

  it('lets ordinary API requests through while Redis is stopped (the request limit fails open), but still limits a password change', async () => {
    const t = await onRedis({ API_RATE_LIMIT: '2' });
    const account = await createUser(t.app, { password: 'shared secret 1' });
    const token = (await tokenAttempt(t.app, account.email, 'shared secret 1', freshIp())).json<{ token: string }>().token;
    await stopRedis(t.app);

    const ip = freshIp();
    const reads = [];
    for (let i = 0; i < 4; i += 1) reads.push((await t.app.inject({ url: '/api/posts', remoteAddress: ip })).statusCode);
    assert.deepEqual(reads, [200, 200, 200, 200]);
    assert.equal(t.warnings(OPEN_WARNING), 1, t.log());

    // PUT /api/user/password checks the current password: its request limit (2 a minute per
    // token here) keeps counting in this process.
    const change = () =>
      t.app.inject({
        method: 'PUT',
        url: '/api/user/password',
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        payload: { current_password: 'a guess', password: 'new password 1234', password_confirmation: 'new password 1234' },
      });
    const changes = [await change(), await change(), await change()];
    assert.deepEqual(
      changes.map((r) => r.statusCode),
      [422, 422, 429],
    );
    assertTooMany(changes[2]!, 2);
    assert.ok(!t.log().includes(token.split('|')[1]!), 'the token secret is never logged');
    await done();
  });

  it('still limits /login, /admin/login and verification mails while Redis is stopped', async () => {
    const t = await onRedis({ MUST_VERIFY_EMAIL: 'true' });
    const member = await createUser(t.app, { password: 'member password 1' });
    const admin = await createUser(t.app, { password: 'admin password 12', admin: true });
    const unverified = await createUser(t.app, { password: 'unverified pass 1', verified: false });
    await stopRedis(t.app);

    // Five wrong passwords from a new address, then the right one: the statuses of the six.
    const guesses = async (path: string, user: { email: string; plainPassword: string }) => {
      const client = new WebClient(t.app, { remoteAddress: freshIp() });
      await client.get(path);
      const statuses = [];
      for (let i = 0; i < 5; i += 1) statuses.push((await client.post(path, { email: user.email, password: 'wrong-password' })).statusCode);
      statuses.push((await client.post(path, { email: user.email, password: user.plainPassword })).statusCode);
      return statuses;
    };
    assert.deepEqual(await guesses('/login', member), [422, 422, 422, 422, 422, 429], '/login');
    assert.deepEqual(await guesses('/admin/login', admin), [422, 422, 422, 422, 422, 429], '/admin/login');

    const reader = new WebClient(t.app, { remoteAddress: freshIp() });
    await login(reader, unverified.email, unverified.plainPassword);
    await reader.get('/email/verify');
    const sends = [];
    for (let i = 0; i < 7; i += 1) sends.push((await reader.post('/email/verification-notification')).statusCode);
    assert.deepEqual(sends, [303, 303, 303, 303, 303, 303, 429], 'verification mails');
    assert.equal(t.warnings(THROTTLE_WARNING), 1, t.log());
    await done();
  });

  it('answers while Redis is frozen (SIGSTOP: connected, never replying) instead of waiting for it', async () => {
    const t = await onRedis();
    const account = await createUser(t.app);
    redis.signal('SIGSTOP');
    try {
      // Bounded by the client's command timeout; without one these would wait until SIGCONT.
      const timeout = (ms: number) => sleep(ms).then(() => 'no answer while Redis is frozen');
      const attempt = await Promise.race([tokenAttempt(t.app, account.email, 'wrong', freshIp()), timeout(15_000)]);
      assert.equal(typeof attempt === 'string' ? attempt : attempt.statusCode, 401);
      const health = await Promise.race([up(t.app), timeout(15_000)]);
      assert.deepEqual(health, { status: 200, body: { status: 'degraded', database: true, rate_limit_store: { kind: 'redis', ok: false } } });
    } finally {
      redis.signal('SIGCONT');
    }
    await done();
  });
});

describe('the database rate-limit store failing while the service runs', () => {
  let running: Running | null = null;
  after(async () => {
    await running?.close();
  });

  // An honest failure of the store's own query: the rate_limits table is renamed away, as a
  // botched migration or an operator's mistake would leave it, so every count fails with
  // "no such table" (SQLite) or "relation does not exist" (PostgreSQL) while the rest of the
  // database answers. Renamed back, it is the store again.
  const renameTable = (db: TestDatabase, from: string, to: string) => sql`alter table ${sql.table(from)} rename to ${sql.table(to)}`.execute(db.db.kysely);

  it('refuses the 6th wrong password on POST /api/tokens while its table is gone, reports it on /up, and recovers', async () => {
    running = await start({ RATE_LIMIT_STORE: 'database', API_RATE_LIMIT: '60', LOGIN_RATE_LIMIT: '5' });
    const t = running;
    assert.deepEqual(await up(t.app), { status: 200, body: { status: 'ok', database: true, rate_limit_store: { kind: 'database', ok: true } } });
    await renameTable(t.database, 'rate_limits', 'rate_limits_away');

    await assertCredentialLimitHolds(t);
    assert.equal(t.warnings(THROTTLE_WARNING), 1, t.log());
    assert.deepEqual(await up(t.app), { status: 200, body: { status: 'degraded', database: true, rate_limit_store: { kind: 'database', ok: false } } });
    // The request limit of an ordinary route lets it through.
    assert.equal((await t.app.inject({ url: '/api/posts', remoteAddress: freshIp() })).statusCode, 200);
    assert.equal(t.warnings(OPEN_WARNING), 1, t.log());

    await renameTable(t.database, 'rate_limits_away', 'rate_limits');
    assert.deepEqual(await up(t.app), { status: 200, body: { status: 'ok', database: true, rate_limit_store: { kind: 'database', ok: true } } });
    const account = await createUser(t.app);
    assert.equal((await tokenAttempt(t.app, account.email, 'wrong', freshIp())).statusCode, 401);
    const buckets = await t.database.db.kysely.selectFrom('rate_limits').select('bucket').execute();
    assert.ok(
      buckets.some((row) => row.bucket.startsWith('throttle:')),
      'the credential limit counts in the table again',
    );
    await running.close();
    running = null;
  });
});
