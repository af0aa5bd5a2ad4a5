// Rate limits under /api: API_RATE_LIMIT per token (or per IP when anonymous), LOGIN_RATE_LIMIT
// per email + IP on POST /api/tokens, Laravel's headers and envelope, and counters shared by
// several instances through Redis or the database (the memory store is per instance).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { REDIS_URL, TEST_APP_KEY, buildTestApp, createTestDatabase, createUser, issueToken, testConfig, type TestApp } from '../helpers.js';
import { skipWithoutRedis } from '../support/services.js';
import { TcpProxy } from '../faults/tcp-proxy.js';
import { sanctumSecret } from './support.js';

const TOO_MANY = '{"message":"Too Many Attempts.","errors":{}}';

const skipRedis = await skipWithoutRedis();

let ipCounter = 0;
/** A client address of its own, so each test starts with empty per-IP buckets. */
const freshIp = () => `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${++ipCounter & 255}`;

/** Issues a token from an address of its own, so that issuing spends no other test's budget. */
async function tokenFor(app: FastifyInstance, email: string, password: string, device = 'rate-limit'): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password, device_name: device }, remoteAddress: freshIp() });
  assert.equal(response.statusCode, 200, response.body);
  return (response.json() as { token: string }).token;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}`, accept: 'application/json' });

async function send(app: FastifyInstance, times: number, options: InjectOptions): Promise<LightMyRequestResponse[]> {
  const responses: LightMyRequestResponse[] = [];
  for (let i = 0; i < times; i += 1) responses.push(await app.inject(options));
  return responses;
}

function assertTooMany(response: LightMyRequestResponse, limit: number): void {
  assert.equal(response.statusCode, 429);
  assert.equal(response.body, TOO_MANY);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  assert.equal(response.headers['x-ratelimit-limit'], String(limit));
  assert.equal(response.headers['x-ratelimit-remaining'], '0');
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  const reset = Number(response.headers['x-ratelimit-reset']);
  const now = Math.floor(Date.now() / 1000);
  assert.ok(reset >= now && reset <= now + 61, `X-RateLimit-Reset ${reset} is a Unix time within the window`);
}

describe('API rate limit configuration', () => {
  it('defaults to 60 requests a minute and 5 credential attempts, in memory', () => {
    const config = loadConfig({ NODE_ENV: 'test', APP_KEY: TEST_APP_KEY });
    assert.equal(config.apiRateLimit, 60);
    assert.equal(config.loginRateLimit, 5);
    assert.equal(config.rateLimitStore, 'memory');
  });

  it('refuses a store it does not know, naming the variable', () => {
    assert.throws(() => testConfig({ RATE_LIMIT_STORE: 'memcached' }), /RATE_LIMIT_STORE/);
    assert.throws(() => testConfig({ API_RATE_LIMIT: '-1' }), /API_RATE_LIMIT/);
    assert.throws(() => testConfig({ LOGIN_RATE_LIMIT: 'five' }), /LOGIN_RATE_LIMIT/);
  });
});

describe('API rate limit (memory store)', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    t = await buildTestApp({ API_RATE_LIMIT: '3' });
    user = await createUser(t.app);
  });
  after(() => t.close());

  it('counts down X-RateLimit-Remaining, then answers 429 with the envelope, Retry-After and X-RateLimit-Reset', async () => {
    const ip = freshIp();
    const responses = await send(t.app, 5, { url: '/api/posts', remoteAddress: ip });
    assert.deepEqual(
      responses.slice(0, 3).map((r) => [r.statusCode, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']]),
      [
        [200, '3', '2'],
        [200, '3', '1'],
        [200, '3', '0'],
      ],
    );
    assertTooMany(responses[3]!, 3);
    assertTooMany(responses[4]!, 3);
  });

  it('applies the default of 60 a minute when API_RATE_LIMIT is empty', async () => {
    const app = await buildTestApp({ API_RATE_LIMIT: '' });
    try {
      const ip = freshIp();
      const responses = await send(app.app, 61, { url: '/api/settings', remoteAddress: ip });
      assert.deepEqual(
        responses.slice(0, 60).map((r) => r.statusCode),
        Array.from({ length: 60 }, () => 200),
      );
      assertTooMany(responses[60]!, 60);
    } finally {
      await app.close();
    }
  });

  const routes: { name: string; method: InjectOptions['method']; url: string; payload?: object; auth: boolean }[] = [
    { name: 'POST /api/tokens', method: 'POST', url: '/api/tokens', payload: { email: 'nobody@example.com', password: 'x', device_name: 'd' }, auth: false },
    { name: 'DELETE /api/tokens/current', method: 'DELETE', url: '/api/tokens/current', auth: true },
    { name: 'DELETE /api/tokens', method: 'DELETE', url: '/api/tokens', auth: true },
    { name: 'GET /api/user', method: 'GET', url: '/api/user', auth: true },
    { name: 'PUT /api/user', method: 'PUT', url: '/api/user', payload: { name: 'Renamed' }, auth: true },
    { name: 'PUT /api/user/password', method: 'PUT', url: '/api/user/password', payload: {}, auth: true },
    { name: 'GET /api/posts', method: 'GET', url: '/api/posts', auth: false },
    { name: 'GET /api/posts/{slug}', method: 'GET', url: '/api/posts/no-such-post', auth: false },
    { name: 'GET /api/settings', method: 'GET', url: '/api/settings', auth: false },
    { name: 'POST /api/posts', method: 'POST', url: '/api/posts', payload: {}, auth: true },
    { name: 'PUT /api/posts/{slug}', method: 'PUT', url: '/api/posts/no-such-post', payload: {}, auth: true },
    { name: 'DELETE /api/posts/{slug}', method: 'DELETE', url: '/api/posts/no-such-post', auth: true },
  ];
  for (const route of routes) {
    it(`limits ${route.name} (${route.auth ? 'per token' : 'per IP'}), answering the 4th call of the minute with 429`, async () => {
      const headers = route.auth ? bearer(await tokenFor(t.app, user.email, user.plainPassword, route.name)) : { accept: 'application/json' };
      // The token is spent only by the limit, not by the route: revoking routes get a fresh one each time.
      const ip = freshIp();
      const responses = await send(t.app, 4, { method: route.method, url: route.url, headers, remoteAddress: ip, ...(route.payload ? { payload: route.payload } : {}) });
      for (const response of responses.slice(0, 3)) assert.notEqual(response.statusCode, 429, route.name);
      assertTooMany(responses[3]!, 3);
    });
  }

  it('gives each token its own budget, whatever the IP, apart from the anonymous budget of that IP', async () => {
    const first = await tokenFor(t.app, user.email, user.plainPassword, 'first');
    const second = await tokenFor(t.app, user.email, user.plainPassword, 'second');
    const ip = freshIp();
    // The first token spends its 3 calls from three different addresses: the budget follows it.
    for (const address of [freshIp(), freshIp(), ip]) {
      assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(first), remoteAddress: address })).statusCode, 200);
    }
    assertTooMany(await t.app.inject({ url: '/api/user', headers: bearer(first), remoteAddress: freshIp() }), 3);
    assert.equal((await t.app.inject({ url: '/api/user', headers: bearer(second), remoteAddress: ip })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/api/posts', remoteAddress: ip })).statusCode, 200);
  });

  it('keys a request with a malformed Authorization header by its IP', async () => {
    const ip = freshIp();
    const responses = await send(t.app, 4, { url: '/api/user', headers: { authorization: 'Bearer not-a-token', accept: 'application/json' }, remoteAddress: ip });
    assert.deepEqual(responses.slice(0, 3).map((r) => r.statusCode), [401, 401, 401]);
    assertTooMany(responses[3]!, 3);
    assertTooMany(await t.app.inject({ url: '/api/posts', remoteAddress: ip }), 3);
  });

  it('refuses an IP that sends made-up token ids once it has used up the limit in failures', async () => {
    const ip = freshIp();
    const forged = (id: number) => ({ url: '/api/user', headers: bearer(`${id}|${sanctumSecret()}`), remoteAddress: ip });
    const statuses: number[] = [];
    for (let id = 900_001; id <= 900_003; id += 1) statuses.push((await t.app.inject(forged(id))).statusCode);
    assert.deepEqual(statuses, [401, 401, 401]);
    // A fresh id would have a fresh token bucket: the IP's failures stop it.
    assertTooMany(await t.app.inject(forged(900_004)), 3);
    // Other addresses are not affected.
    assert.equal((await t.app.inject({ ...forged(900_005), remoteAddress: freshIp() })).statusCode, 401);
  });

  it('limits nothing outside /api', async () => {
    const ip = freshIp();
    const responses = await send(t.app, 5, { url: '/up', remoteAddress: ip });
    assert.deepEqual(responses.map((r) => r.statusCode), [200, 200, 200, 200, 200]);
    assert.equal(responses[0]!.headers['x-ratelimit-limit'], undefined);
  });

  it('limits nothing with API_RATE_LIMIT=0', async () => {
    const app = await buildTestApp({ API_RATE_LIMIT: '0' });
    try {
      const responses = await send(app.app, 70, { url: '/api/settings' });
      assert.ok(responses.every((r) => r.statusCode === 200));
      assert.equal(responses[0]!.headers['x-ratelimit-limit'], undefined);
    } finally {
      await app.close();
    }
  });
});

describe('POST /api/tokens credential limit (per email + IP)', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  const password = 'right password 123';

  before(async () => {
    t = await buildTestApp({ LOGIN_RATE_LIMIT: '5' });
    user = await createUser(t.app, { email: 'Limited.User@Example.com', password });
  });
  after(() => t.close());

  const attempt = (email: string, pass: string, ip: string) =>
    t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password: pass, device_name: 'd' }, remoteAddress: ip, headers: { accept: 'application/json' } });

  it('answers the 6th attempt of the minute with 429, even with the right password', async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await attempt(user.email, 'wrong', ip)).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401]);
    assertTooMany(await attempt(user.email, password, ip), 5);
  });

  it('counts the address case-insensitively, as /login does', async () => {
    const ip = freshIp();
    const variants = ['limited.user@example.com', 'LIMITED.USER@EXAMPLE.COM', 'Limited.User@Example.com', 'limited.USER@example.com', 'LiMiTeD.user@example.com'];
    for (const email of variants) assert.equal((await attempt(email, 'wrong', ip)).statusCode, 401);
    assertTooMany(await attempt('limited.user@EXAMPLE.com', password, ip), 5);
  });

  it('keeps other addresses from the same IP and the same address from another IP apart', async () => {
    const ip = freshIp();
    for (let i = 0; i < 5; i += 1) await attempt(user.email, 'wrong', ip);
    assert.equal((await attempt(user.email, password, freshIp())).statusCode, 200);
    assert.equal((await attempt('someone.else@example.com', 'wrong', ip)).statusCode, 401);
  });

  it('does not check the password once limited (a Laravel bcrypt hash is not upgraded by the right password)', async () => {
    const imported = await createUser(t.app, { password: 'placeholder password' });
    const laravelHash = (await bcrypt.hash(password, 4)).replace(/^\$2b\$/, '$2y$');
    await t.db.kysely.updateTable('users').set({ password: laravelHash }).where('id', '=', imported.id).execute();
    const ip = freshIp();
    for (let i = 0; i < 5; i += 1) assert.equal((await attempt(imported.email, 'wrong', ip)).statusCode, 401);
    assertTooMany(await attempt(imported.email, password, ip), 5);
    const stored = await t.db.kysely.selectFrom('users').select('password').where('id', '=', imported.id).executeTakeFirstOrThrow();
    // A password check that succeeded would have rehashed it to argon2id.
    assert.equal(stored.password, laravelHash);
  });

  it('counts nothing with LOGIN_RATE_LIMIT=0', async () => {
    const app = await buildTestApp({ LOGIN_RATE_LIMIT: '0' });
    try {
      const account = await createUser(app.app, { password });
      for (let i = 0; i < 7; i += 1) {
        const response = await app.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: account.email, password: 'wrong', device_name: 'd' } });
        assert.equal(response.statusCode, 401);
      }
    } finally {
      await app.close();
    }
  });
});

describe('rate limits shared by several instances', () => {
  type Pair = { a: FastifyInstance; b: FastifyInstance; close(): Promise<void> };

  /** Two app instances with one APP_KEY on one database (the database store needs it shared). */
  async function pair(env: Record<string, string>): Promise<Pair> {
    const database = await createTestDatabase();
    const key = `base64:${randomBytes(32).toString('base64')}`;
    const config = testConfig({ APP_KEY: key, API_RATE_LIMIT: '4', ...env });
    const a = await buildApp(config, { db: database.db });
    const b = await buildApp(config, { db: database.db });
    await Promise.all([a.ready(), b.ready()]);
    return {
      a,
      b,
      close: async () => {
        await a.close();
        await b.close();
        await database.drop();
      },
    };
  }

  const stores: { store: string; env: Record<string, string>; shared: boolean; skip: string | false }[] = [
    { store: 'redis', env: { RATE_LIMIT_STORE: 'redis', REDIS_URL }, shared: true, skip: skipRedis },
    { store: 'database', env: { RATE_LIMIT_STORE: 'database' }, shared: true, skip: false },
    { store: 'memory', env: { RATE_LIMIT_STORE: 'memory' }, shared: false, skip: false },
  ];
  for (const { store, env, shared, skip } of stores) {
    it(`${shared ? 'shares' : 'does not share'} the per-IP limit between two instances with the ${store} store`, { skip }, async () => {
      const instances = await pair(env);
      try {
        const ip = freshIp();
        const get = (app: FastifyInstance) => app.inject({ url: '/api/posts', remoteAddress: ip });
        const statuses = [await get(instances.a), await get(instances.b), await get(instances.a), await get(instances.b), await get(instances.a), await get(instances.b)].map(
          (r) => r.statusCode,
        );
        assert.deepEqual(statuses, shared ? [200, 200, 200, 200, 429, 429] : [200, 200, 200, 200, 200, 200]);
      } finally {
        await instances.close();
      }
    });
  }

  it('shares the per-token and the per-email limits through Redis', { skip: skipRedis }, async () => {
    const instances = await pair({ RATE_LIMIT_STORE: 'redis', REDIS_URL, LOGIN_RATE_LIMIT: '2' });
    try {
      const account = await createUser(instances.a, { password: 'shared secret 1' });
      const ip = freshIp();
      const attempt = (app: FastifyInstance) =>
        app.inject({ method: 'POST', url: '/api/tokens', payload: { email: account.email, password: 'wrong', device_name: 'd' }, remoteAddress: ip });
      assert.equal((await attempt(instances.a)).statusCode, 401);
      assert.equal((await attempt(instances.b)).statusCode, 401);
      assertTooMany(await attempt(instances.a), 2);

      const token = await tokenFor(instances.a, account.email, 'shared secret 1');
      const get = (app: FastifyInstance) => app.inject({ url: '/api/user', headers: bearer(token), remoteAddress: freshIp() });
      const statuses = [await get(instances.a), await get(instances.b), await get(instances.a), await get(instances.b), await get(instances.b)].map((r) => r.statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
    } finally {
      await instances.close();
    }
  });

  it('stores only ids, hashes and addresses in Redis: no token secret, no email', { skip: skipRedis }, async () => {
    const key = `base64:${randomBytes(32).toString('base64')}`;
    const t = await buildTestApp({ APP_KEY: key, API_RATE_LIMIT: '10', LOGIN_RATE_LIMIT: '5', RATE_LIMIT_STORE: 'redis', REDIS_URL });
    const redis = new Redis(REDIS_URL);
    try {
      const before = new Set(await redis.keys('tessera:rl:*'));
      const account = await createUser(t.app, { email: 'Stored.Nowhere@Example.com', password: 'shared secret 1' });
      const token = await issueToken(t.app, account.email, 'shared secret 1');
      await t.app.inject({ url: '/api/user', headers: bearer(token) });
      // The keys this app wrote (other tests may write some meanwhile: they hold no secret either).
      const keys = (await redis.keys('tessera:rl:*')).filter((k) => !before.has(k));
      assert.ok(keys.length >= 2, keys.join(', '));
      const text = keys.join('\n').toLowerCase();
      assert.ok(!text.includes(token.split('|')[1]!.toLowerCase()));
      assert.ok(!text.includes('stored.nowhere'));
      assert.ok(keys.some((k) => k.endsWith(`token:${token.split('|')[0]}`)), keys.join(', '));
    } finally {
      redis.disconnect();
      await t.close();
    }
  });

  it('lets requests through while Redis is away, and limits again by itself when it returns', { skip: skipRedis }, async () => {
    const redis = new URL(REDIS_URL);
    const proxy = new TcpProxy(redis.hostname, Number(redis.port || 6379));
    const port = await proxy.start();
    const key = `base64:${randomBytes(32).toString('base64')}`;
    const t = await buildTestApp({ APP_KEY: key, API_RATE_LIMIT: '2', RATE_LIMIT_STORE: 'redis', REDIS_URL: `redis://127.0.0.1:${port}` });
    const threeCalls = async () => {
      const ip = freshIp();
      return (await send(t.app, 3, { url: '/api/posts', remoteAddress: ip })).map((r) => r.statusCode);
    };
    try {
      assert.deepEqual(await threeCalls(), [200, 200, 429]);
      await proxy.down();
      assert.deepEqual(await threeCalls(), [200, 200, 200]);
      await proxy.up();
      // The client reconnects on its own (within its back-off of at most 2 s).
      let statuses = await threeCalls();
      for (let tries = 0; statuses[2] !== 429 && tries < 50; tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        statuses = await threeCalls();
      }
      assert.deepEqual(statuses, [200, 200, 429]);
    } finally {
      await t.close();
      await proxy.close();
    }
  });

  it('lets requests through, and logs it, when the Redis store is unreachable', async () => {
    const database = await createTestDatabase();
    const lines: string[] = [];
    const app = await buildApp(testConfig({ API_RATE_LIMIT: '2', RATE_LIMIT_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:1', LOG_LEVEL: 'warn' }), {
      db: database.db,
      loggerStream: { write: (line: string) => void lines.push(line) },
    });
    try {
      const account = await createUser(app, { password: 'shared secret 1' });
      const token = await issueToken(app, account.email, 'shared secret 1');
      const responses = await send(app, 4, { url: '/api/user', headers: bearer(token) });
      assert.deepEqual(responses.map((r) => r.statusCode), [200, 200, 200, 200]);
      const log = lines.join('');
      assert.match(log, /rate limit store failed/);
      assert.ok(!log.includes(token.split('|')[1]!), 'the token secret is never logged');
    } finally {
      await app.close();
      await database.drop();
    }
  });
});
