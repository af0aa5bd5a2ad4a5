// The account throttles' stores, one behaviour suite for each: memory, the database (a SQLite
// file, and PostgreSQL with TEST_DATABASE_URL) and Redis. The shared ones are what let several
// instances count a login's failures together: two stores on one database or one Redis share
// their counts and lose none of their concurrent hits; and when the shared store fails, the
// throttle still limits (in this process's memory), throws nothing and warns once a minute.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { connect, type Db } from '../../src/db/connect.js';
import { createRedisClient, rateLimitNamespace } from '../../src/modules/rate-limit/redis.js';
import { DatabaseThrottleStore } from '../../src/modules/throttle/database-store.js';
import { FallbackThrottleStore } from '../../src/modules/throttle/fallback-store.js';
import { RedisThrottleStore } from '../../src/modules/throttle/redis-store.js';
import { MemoryThrottleStore, Throttle, type ThrottleStore } from '../../src/modules/throttle/throttle.js';
import { TcpProxy } from '../faults/tcp-proxy.js';
import { REDIS_URL, TEST_DATABASE_URL, createTestDatabase } from '../helpers.js';
import { needsPostgres, skipWithoutRedis } from '../support/services.js';

// This run's keys in Redis, deleted afterwards; other runs (and the app's own keys) stay apart.
const RUN = `tessera:test:throttle:${randomBytes(6).toString('hex')}:`;

const skipRedis = await skipWithoutRedis();

async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

let keyCounter = 0;
/** A throttle key of its own for each use, shaped like the login's (email and IP). */
const freshKey = () => `login|user${++keyCounter}@example.com|10.0.${keyCounter >> 8}.${keyCounter & 255}`;

/** Two stores on one shared place (b is null for the memory store), and the names kept there. */
type Opened = { a: ThrottleStore; b: ThrottleStore | null; names(): Promise<string[]>; close(): Promise<void> };
type Kind = { name: string; skip: string | false; open(): Promise<Opened> };

/** Two database stores, each on a connection of its own, as two instances have. */
async function databaseStores(options: { sqlite: boolean }): Promise<Opened> {
  const database = await createTestDatabase({ file: true, sqlite: options.sqlite });
  const secret = randomBytes(32);
  return {
    a: new DatabaseThrottleStore(database.db, secret),
    b: new DatabaseThrottleStore(database.connectAgain(), secret),
    names: async () => (await database.db.kysely.selectFrom('rate_limits').select('bucket').execute()).map((row) => row.bucket),
    close: () => database.drop(),
  };
}

const kinds: Kind[] = [
  {
    name: 'memory',
    skip: false,
    open: async () => ({ a: new MemoryThrottleStore(), b: null, names: async () => [], close: async () => undefined }),
  },
  { name: 'database (SQLite file)', skip: false, open: () => databaseStores({ sqlite: true }) },
  { name: 'database (PostgreSQL)', skip: needsPostgres, open: () => databaseStores({ sqlite: false }) },
  {
    name: 'Redis',
    skip: skipRedis,
    open: async () => {
      const namespace = `${RUN}${randomBytes(4).toString('hex')}:`;
      const secret = randomBytes(32);
      const clients = [createRedisClient(REDIS_URL), createRedisClient(REDIS_URL)] as const;
      return {
        a: new RedisThrottleStore(clients[0], { namespace, secret }),
        b: new RedisThrottleStore(clients[1], { namespace, secret }),
        names: async () => {
          const reader = new Redis(REDIS_URL);
          try {
            return await reader.keys(`${namespace}*`);
          } finally {
            reader.disconnect();
          }
        },
        close: async () => {
          for (const client of clients) client.disconnect();
          await deleteRedisKeys(namespace);
        },
      };
    },
  },
];

for (const kind of kinds) {
  describe(`the ${kind.name} throttle store`, { skip: kind.skip }, () => {
    let opened: Opened;
    before(async () => {
      opened = await kind.open();
    });
    after(() => opened.close());

    it('opens a window of decayMs with one hit, then counts up without moving its end', async () => {
      const key = freshKey();
      const decayMs = 60_000;
      const t0 = Date.now();
      const first = await opened.a.hit(key, decayMs, t0);
      assert.equal(first.hits, 1);
      // Redis measures the window left (PTTL) in the same script that opened it.
      assert.ok(first.resetAt <= t0 + decayMs && first.resetAt >= t0 + decayMs - 100, `the window ends ${first.resetAt - t0} ms after its first hit`);
      await sleep(300);
      const t1 = Date.now();
      const second = await opened.a.hit(key, decayMs, t1);
      assert.equal(second.hits, 2);
      // What is left of the window shrank by the time between the hits (at least the 300 ms
      // slept), however long the calls took; a hit that moved the end would leave all of decayMs.
      const leftAtFirst = first.resetAt - t0;
      const leftAtSecond = second.resetAt - t1;
      assert.ok(leftAtSecond <= leftAtFirst - 250, `the end moved: ${leftAtSecond} ms left after the second hit, ${leftAtFirst} ms after the first`);
      assert.equal((await opened.a.hit(key, decayMs, Date.now())).hits, 3);
    });

    it('answers get with the open window, without counting, and null for a key never hit', async () => {
      const key = freshKey();
      assert.equal(await opened.a.get(key, Date.now()), null);
      await opened.a.hit(key, 60_000, Date.now());
      const lastAt = Date.now();
      const last = await opened.a.hit(key, 60_000, lastAt);
      for (let i = 0; i < 2; i += 1) {
        const askedAt = Date.now();
        const bucket = await opened.a.get(key, askedAt);
        assert.ok(bucket !== null);
        assert.equal(bucket.hits, 2);
        // The same window: what is left of it never grows between the hit and a later get
        // (Redis tells the end as now + PTTL, so no fixed tolerance would fit a slow call), and
        // it is still most of the minute.
        const left = bucket.resetAt - askedAt;
        assert.ok(left <= last.resetAt - lastAt && left > 50_000, `get tells ${left} ms left, the hit ${last.resetAt - lastAt} ms`);
      }
    });

    it('closes the window after decayMs: get answers null and the next hit starts again at 1', async () => {
      const key = freshKey();
      // The rule is a time: a second leaves four calls room on a busy machine, and the sleep
      // starts after the window opened, so it always ends past the window's end.
      const decayMs = 1000;
      for (let i = 0; i < 3; i += 1) await opened.a.hit(key, decayMs, Date.now());
      assert.equal((await opened.a.get(key, Date.now()))?.hits, 3);
      await sleep(decayMs + 100);
      assert.equal(await opened.a.get(key, Date.now()), null);
      const now = Date.now();
      const fresh = await opened.a.hit(key, decayMs, now);
      assert.equal(fresh.hits, 1);
      assert.ok(fresh.resetAt > now + 200, 'a new window of its own');
    });

    it('clears a key, and only that key', async () => {
      const [key, other] = [freshKey(), freshKey()];
      for (const each of [key, key, other]) await opened.a.hit(each, 60_000, Date.now());
      await opened.a.clear(key);
      assert.equal(await opened.a.get(key, Date.now()), null);
      assert.equal((await opened.a.get(other, Date.now()))?.hits, 1);
      assert.equal((await opened.a.hit(key, 60_000, Date.now())).hits, 1);
    });

    it('lets five attempts through Throttle, then limits the sixth with the seconds left', async () => {
      const throttle = new Throttle(opened.a);
      const key = freshKey();
      for (let i = 0; i < 5; i += 1) assert.deepEqual(await throttle.attempt(key, 5, 60), { limited: false });
      const state = await throttle.attempt(key, 5, 60);
      assert.ok(state.limited && state.retryAfterSeconds >= 59 && state.retryAfterSeconds <= 60, JSON.stringify(state));
      assert.deepEqual(await throttle.check(key, 5), state);
    });

    // The memory store is one process's own: there is nothing to share.
    const sharedOnly = kind.name === 'memory' && 'a shared store only';

    it('shares counts and clears between two stores on one shared place (two instances)', { skip: sharedOnly }, async () => {
      const b = opened.b!;
      const key = freshKey();
      const [onA, onB] = [new Throttle(opened.a), new Throttle(b)];
      for (let i = 0; i < 3; i += 1) assert.equal((await onA.attempt(key, 5, 60)).limited, false);
      for (let i = 0; i < 2; i += 1) assert.equal((await onB.attempt(key, 5, 60)).limited, false);
      assert.equal((await onA.attempt(key, 5, 60)).limited, true, 'the sixth attempt, counting both instances');
      assert.equal((await b.get(key, Date.now()))?.hits, 6);
      await onB.clear(key);
      assert.equal(await opened.a.get(key, Date.now()), null);
    });

    it('counts every one of 40 concurrent hits from two stores', { skip: sharedOnly }, async () => {
      const b = opened.b!;
      const key = freshKey();
      const buckets = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? opened.a : b).hit(key, 60_000, Date.now())));
      // Each hit saw a count of its own: a lost update would show one count twice.
      assert.deepEqual(
        buckets.map((bucket) => bucket.hits).sort((x, y) => x - y),
        Array.from({ length: 40 }, (_, i) => i + 1),
      );
      assert.equal((await opened.a.get(key, Date.now()))?.hits, 40);
    });

    it('keeps no email or IP in what it stores: a fixed-length name under the throttle: prefix', { skip: sharedOnly }, async () => {
      const before = new Set(await opened.names());
      await opened.a.hit(`login|${'x'.repeat(240)}.Stored.Nowhere@example.com|10.99.99.99`, 60_000, Date.now());
      const added = (await opened.names()).filter((name) => !before.has(name));
      assert.equal(added.length, 1, added.join(', '));
      const name = added[0]!;
      assert.match(name, /(^|:)throttle:[0-9a-f]{64}$/);
      assert.ok(!/stored|nowhere|10\.99/i.test(name), name);
    });
  });
}

describe('a shared throttle store that fails', () => {
  /** A Throttle over `shared` that falls back to memory, on a clock the test moves. */
  function degraded(shared: ThrottleStore) {
    const clock = { now: 1_000_000 };
    const warnings: { details: object; message: string }[] = [];
    const store = new FallbackThrottleStore(shared, { warn: (details, message) => warnings.push({ details, message }) }, { count: 0 }, () => clock.now);
    return { throttle: new Throttle(store, () => clock.now), clock, warnings };
  }

  /** Five attempts pass and the sixth is limited, no call throws; one warning at most a minute. */
  async function assertStillLimits(shared: ThrottleStore): Promise<void> {
    const { throttle, clock, warnings } = degraded(shared);
    const key = freshKey();
    for (let i = 0; i < 5; i += 1) assert.deepEqual(await throttle.attempt(key, 5, 60), { limited: false });
    assert.deepEqual(await throttle.attempt(key, 5, 60), { limited: true, retryAfterSeconds: 60 });
    assert.deepEqual(await throttle.check(key, 5), { limited: true, retryAfterSeconds: 60 });
    assert.equal(warnings.length, 1, 'one warning for the seven failed calls of this minute');
    assert.match(warnings[0]!.message, /throttle store failed/);
    assert.ok(!JSON.stringify(warnings).includes('example.com'), 'the key is not logged');
    clock.now += 60_000;
    // A new window: one attempt passes, and the minute that passed allows one more warning.
    assert.deepEqual(await throttle.attempt(key, 5, 60), { limited: false });
    assert.equal(warnings.length, 2);
    await throttle.clear(key);
    for (let i = 0; i < 5; i += 1) assert.equal((await throttle.attempt(key, 5, 60)).limited, false, 'clear forgot the counts');
    assert.equal(warnings.length, 2);
  }

  it('keeps limiting in memory when the database is closed, and warns once a minute', async () => {
    const db: Db = connect(TEST_DATABASE_URL);
    await db.close();
    await assertStillLimits(new DatabaseThrottleStore(db, randomBytes(32)));
  });

  it('keeps limiting in memory when Redis refuses connections, and warns once a minute', async () => {
    const redis = createRedisClient('redis://127.0.0.1:1');
    try {
      await assertStillLimits(new RedisThrottleStore(redis, { namespace: `${RUN}closed:`, secret: randomBytes(32) }));
    } finally {
      redis.disconnect();
    }
  });

  it('counts in Redis again by itself once Redis is back', { skip: skipRedis }, async () => {
    const target = new URL(REDIS_URL);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    const port = await proxy.start();
    const options = { namespace: `${RUN}proxy:`, secret: randomBytes(32) };
    const viaProxy = createRedisClient(`redis://127.0.0.1:${port}`);
    const direct = createRedisClient(REDIS_URL);
    const witness = new RedisThrottleStore(direct, options);
    const { throttle } = degraded(new RedisThrottleStore(viaProxy, options));
    const key = freshKey();
    try {
      await throttle.attempt(key, 5, 60);
      assert.equal((await witness.get(key, Date.now()))?.hits, 1, 'counted in Redis');
      await proxy.down();
      assert.equal((await throttle.attempt(key, 5, 60)).limited, false);
      assert.equal((await witness.get(key, Date.now()))?.hits, 1, 'counted in memory while Redis is away');
      await proxy.up();
      // The client reconnects on its own (within its back-off of at most 2 s).
      for (let tries = 0; tries < 50 && (await witness.get(key, Date.now()))?.hits !== 2; tries += 1) {
        await throttle.attempt(key, 100, 60);
        await sleep(100);
      }
      assert.ok(((await witness.get(key, Date.now()))?.hits ?? 0) >= 2, 'counted in Redis again');
    } finally {
      viaProxy.disconnect();
      direct.disconnect();
      await proxy.close();
      await deleteRedisKeys(options.namespace);
    }
  });
});

describe('the app with RATE_LIMIT_STORE=redis', { skip: skipRedis }, () => {
  // The services hold the Redis connection (the throttles', shared with the API limits); the app
  // closes them (the CLI too): left open, the connection would keep the process alive. The child
  // starts the app (the API limits connect), counts one attempt, closes the app, and must exit by
  // itself.
  it('counts attempts in Redis under the deployment namespace, and once closed lets the process exit', async () => {
    const appKey = randomBytes(32);
    const src = (path: string) => JSON.stringify(new URL(`../../src/${path}`, import.meta.url).href);
    const script = `
      import { buildApp } from ${src('app.ts')};
      import { loadConfig } from ${src('config.ts')};
      const config = loadConfig({ NODE_ENV: 'test', APP_KEY: 'base64:${appKey.toString('base64')}', DATABASE_URL: 'sqlite::memory:',
        LOG_LEVEL: 'silent', API_RATE_LIMIT: '60', LOGIN_RATE_LIMIT: '5', RATE_LIMIT_STORE: 'redis', REDIS_URL: ${JSON.stringify(REDIS_URL)} });
      const app = await buildApp(config);
      await app.ready();
      // The API limits connected the services' client at start: one connection for both.
      process.stdout.write(app.services.redis.status + ' ');
      await app.services.throttle.hit('login|exit@example.com|10.0.0.1', 60);
      await app.close();
      process.stdout.write('closed');`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    clearTimeout(timer);
    const namespace = rateLimitNamespace(appKey);
    try {
      assert.equal(code, 0, `the process exits by itself once the app is closed: ${output}`);
      assert.equal(output, 'ready closed', 'the API limits and the throttles share the one client');
      const redis = new Redis(REDIS_URL);
      try {
        assert.equal((await redis.keys(`${namespace}throttle:*`)).length, 1, 'the attempt was counted in Redis, under the deployment namespace');
      } finally {
        redis.disconnect();
      }
    } finally {
      await deleteRedisKeys(namespace);
    }
  });
});
