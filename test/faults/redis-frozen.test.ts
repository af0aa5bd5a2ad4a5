// A frozen Redis (SIGSTOP: its connections stay open, nothing is answered) behind
// RATE_LIMIT_STORE=redis. Every command to it waits out the client's command timeout (a second,
// src/modules/rate-limit/redis.ts); without a breaker every API request waited that second for
// the whole freeze. With the breaker (src/modules/rate-limit/breaker.ts) only the requests under
// way when Redis froze wait; the rest skip Redis at once, the password limit still refuses the
// 6th wrong password (counted in this process), /up says so at once, and once Redis is thawed the
// breaker closes and the counts go to Redis again.
// What Redis was sent during the freeze is read from the server itself: commands sent to a frozen
// server wait in its sockets and run once it is thawed, so INFO commandstats counts them.
// The redis-server is this file's own, on a free port: the shared one on 6379 is never touched.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { breakerFor, type Breaker } from '../../src/modules/rate-limit/breaker.js';
import { rateLimitNamespace } from '../../src/modules/rate-limit/redis.js';
import { bearer, createTestDatabase, createUser, issueToken, testConfig, type TestDatabase } from '../helpers.js';
import { freePort } from '../support/browser.js';
import { OwnRedis } from '../support/redis-server.js';
import { skipWithoutRedisServer } from '../support/services.js';

const skip = skipWithoutRedisServer();

/** The client's command timeout (createRedisClient): a request that took this long waited for Redis. */
const COMMAND_TIMEOUT_MS = 1000;
const WAVES = 5;
const WAVE = 10;

/**
 * The commands the limits send: their scripts (the rate limit's and the throttle's) and the
 * throttle's deletes; not the probes' PINGs, nor the commands the scripts run inside (INCR,
 * PTTL…, which commandstats counts too), nor this test's own questions.
 */
const LIMIT_COMMANDS = ['evalsha', 'eval', 'del'];
const limitCommands = (calls: Map<string, number>) => LIMIT_COMMANDS.reduce((sum, name) => sum + (calls.get(name) ?? 0), 0);

/** Checks `predicate` every 50 ms until it holds; fails after `tries` checks (a count, not a clock). */
async function until(what: string, predicate: () => Promise<boolean> | boolean, tries = 400): Promise<void> {
  for (let tried = 1; !(await predicate()); tried += 1) {
    assert.ok(tried < tries, `${what} after ${tried} checks`);
    await sleep(50);
  }
}

/** The response and whether it waited out a Redis command timeout. */
async function timed(send: () => Promise<LightMyRequestResponse>): Promise<{ response: LightMyRequestResponse; waited: boolean }> {
  const started = performance.now();
  const response = await send();
  return { response, waited: performance.now() - started >= COMMAND_TIMEOUT_MS };
}

describe('a frozen Redis behind the rate limits (SIGSTOP)', { skip }, () => {
  let redis: OwnRedis;
  let database: TestDatabase;
  let app: FastifyInstance;
  const lines: string[] = [];

  before(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    database = await createTestDatabase();
    const config = testConfig({ RATE_LIMIT_STORE: 'redis', REDIS_URL: redis.url, API_RATE_LIMIT: '1000', LOGIN_RATE_LIMIT: '5', LOG_LEVEL: 'info' });
    app = await buildApp(config, {
      db: database.db,
      loggerStream: { write: (line: string) => void lines.push(line) },
      mailer: { send: async () => undefined, close: () => undefined },
    });
    await app.ready();
  });
  after(async () => {
    redis?.signal('SIGCONT');
    await app?.close();
    await database?.drop();
    await redis?.stop();
  });

  const logged = (message: string) => lines.filter((line) => (JSON.parse(line) as { msg?: string }).msg === message).length;
  const wrongPassword = (email: string, ip: string) => () =>
    app.inject({ method: 'POST', url: '/api/tokens', payload: { email, password: 'wrong', device_name: 'd' }, remoteAddress: ip, headers: { accept: 'application/json' } });

  it('lets only the requests under way when Redis froze wait for it, still refuses the 6th wrong password, and goes back to Redis once it is thawed', async () => {
    const account = await createUser(app);
    const token = await issueToken(app, account.email, account.plainPassword);
    const user = () => app.inject({ url: '/api/user', headers: bearer(token), remoteAddress: '10.88.0.1' });
    const breaker: Breaker = breakerFor(app.services.redis!);

    // Healthy: the request limit counts in Redis.
    await redis.resetStats();
    assert.equal((await user()).statusCode, 200);
    assert.ok(limitCommands(await redis.commandCalls()) >= 1, 'GET /api/user counts in Redis');
    assert.equal(breaker.state, 'closed');
    await redis.resetStats();

    redis.signal('SIGSTOP');
    // Waves of concurrent requests, one after the other: the first wave is under way when
    // Redis stops answering; by the second the breaker has seen its failures.
    const reads: { response: LightMyRequestResponse; waited: boolean }[] = [];
    for (let wave = 0; wave < WAVES; wave += 1) reads.push(...(await Promise.all(Array.from({ length: WAVE }, () => timed(user)))));
    assert.deepEqual(new Set(reads.map((r) => r.response.statusCode)), new Set([200]), 'every read is answered');
    const waitedReads = reads.filter((r) => r.waited).length;
    assert.ok(waitedReads <= WAVE, `${waitedReads} of ${reads.length} reads waited for Redis (at most the first wave)`);
    assert.notEqual(breaker.state, 'closed');

    // /up says the store is away at once: the open breaker answers for it.
    const health = await timed(() => app.inject({ url: '/up' }));
    assert.equal(health.waited, false, '/up did not wait for Redis');
    assert.deepEqual(health.response.json(), { status: 'degraded', database: true, rate_limit_store: { kind: 'redis', ok: false } });

    // The password limit never fails open: five wrong passwords, then 429, counted in this process.
    const guesses = [];
    for (let i = 0; i < 6; i += 1) guesses.push(await timed(wrongPassword(account.email, '10.88.0.2')));
    assert.deepEqual(
      guesses.map((g) => g.response.statusCode),
      [401, 401, 401, 401, 401, 429],
    );
    assert.equal(guesses.filter((g) => g.waited).length, 0, 'no sign-in attempt waited for Redis');
    const fallbacks = breaker.fallbacks;
    assert.ok(fallbacks >= reads.length + guesses.length, `fallbacks counted: ${fallbacks}`);

    redis.signal('SIGCONT');
    await until('the breaker closes once Redis answers', () => breaker.state === 'closed');
    // Sent during the freeze (and run after it): the first wave's counts only.
    const sentWhileFrozen = limitCommands(await redis.commandCalls());
    assert.ok(sentWhileFrozen <= WAVE, `${sentWhileFrozen} limit commands reached the frozen Redis (at most the first wave's ${WAVE})`);
    assert.equal(logged('rate limit store: Redis failing; skipped until it answers again, limits count in this process meanwhile'), 1);
    assert.equal(logged('rate limit store: Redis answers again'), 1);

    // Back: the request limit and the password limit count in Redis again.
    await redis.resetStats();
    for (let i = 0; i < 5; i += 1) assert.equal((await user()).statusCode, 200);
    assert.equal((await wrongPassword(account.email, '10.88.0.3')()).statusCode, 401);
    assert.ok(limitCommands(await redis.commandCalls()) >= 6, 'the limits count in Redis again');
    const keys = await redis.keys(`${rateLimitNamespace(app.config.appKey)}*`);
    assert.ok(
      keys.some((key) => key.includes('throttle:')),
      `the password limit counts in Redis: ${keys.join(', ')}`,
    );
    assert.equal(breaker.fallbacks, fallbacks, 'no fallback once closed');
  });
});
