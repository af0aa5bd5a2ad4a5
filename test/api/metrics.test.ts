// GET /metrics (docs/metrics.md): only with METRICS_TOKEN, only with that token as a bearer
// token, in the Prometheus text format (read here by parse-prometheus-text-format, not by our
// code), with counters that rise by exactly the requests and sign-ins the test sends, labelled
// by route pattern, never by the URL asked for. The cluster's side (one scrape for every worker,
// restarts) is test/faults/metrics-cluster.test.ts.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { loadConfig, ConfigError } from '../../src/config.js';
import { buildTestApp, createUser, issueToken, onPostgres, TEST_APP_KEY, type TestApp } from '../helpers.js';
import { freePort } from '../support/browser.js';
import { WebClient } from '../support/client.js';
import { histogramCounts, labelValues, parseMetrics, series, valueOf, type Families } from '../support/metrics.js';
import { oncePerRun } from '../support/services.js';
import { codeAt, enableTwoFactor } from '../support/two-factor-sign-in.js';

const TOKEN = `metrics-${'0123456789abcdef'.repeat(3)}`;
const DB = onPostgres ? 'PostgreSQL' : 'SQLite';

describe(`GET /metrics without METRICS_TOKEN (${DB})`, () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  it('answers 404, the very answer of any unknown address, token or not', async () => {
    for (const accept of ['text/plain', 'application/json', 'text/html']) {
      const unknown = await t.app.inject({ url: '/no-such-page', headers: { accept } });
      for (const headers of [{ accept }, { accept, authorization: `Bearer ${TOKEN}` }]) {
        const response = await t.app.inject({ url: '/metrics', headers });
        assert.equal(response.statusCode, 404);
        assert.equal(response.headers['content-type'], unknown.headers['content-type']);
        assert.equal(response.body, unknown.body);
      }
    }
  });
});

describe('METRICS_TOKEN in the configuration', { skip: oncePerRun('the configuration') }, () => {
  const load = (token: string) => loadConfig({ NODE_ENV: 'production', APP_KEY: TEST_APP_KEY, METRICS_TOKEN: token });

  it('refuses a short token, or one with spaces, at start, naming the variable and never the value', () => {
    for (const token of ['short-secret', `${'a'.repeat(31)}`, `${'a'.repeat(20)} ${'b'.repeat(20)}`]) {
      assert.throws(
        () => load(token),
        (error: unknown) => error instanceof ConfigError && error.message.startsWith('METRICS_TOKEN must be at least 32') && !error.message.includes(token),
      );
    }
  });

  it('takes a token of 32 characters or more, and no token as no metrics', () => {
    assert.equal(load('a'.repeat(32)).metricsToken, 'a'.repeat(32));
    assert.equal(load('').metricsToken, null);
    assert.equal(loadConfig({ NODE_ENV: 'production', APP_KEY: TEST_APP_KEY }).metricsToken, null);
  });
});

describe(`GET /metrics with METRICS_TOKEN (${DB})`, () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof createUser>>;
  let apiToken: string;

  const scrapeText = async (): Promise<string> => {
    const response = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(response.statusCode, 200, response.body);
    return response.body;
  };
  const scrape = async (): Promise<Families> => parseMetrics(await scrapeText());

  before(async () => {
    t = await buildTestApp({ METRICS_TOKEN: TOKEN });
    user = await createUser(t.app);
    apiToken = await issueToken(t.app, user.email, user.plainPassword);
  });
  after(async () => t.close());

  it('refuses a missing, wrong or differently sent token with 401 and shows nothing', async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['no header', {}],
      ['a wrong token of the same length', { authorization: `Bearer ${TOKEN.slice(0, -1)}x` }],
      ['a prefix of the token', { authorization: `Bearer ${TOKEN.slice(0, 10)}` }],
      ['the token and more', { authorization: `Bearer ${TOKEN}x` }],
      ['another scheme', { authorization: `Basic ${TOKEN}` }],
      ['the token without a scheme', { authorization: TOKEN }],
      ['an API token', { authorization: `Bearer ${apiToken}` }],
    ];
    for (const [name, headers] of cases) {
      const response = await t.app.inject({ url: '/metrics', headers: { accept: 'application/json', ...headers } });
      assert.equal(response.statusCode, 401, name);
      assert.equal(response.headers['www-authenticate'], 'Bearer', name);
      assert.doesNotMatch(response.body, /tessera_|nodejs_|process_/, name);
    }
  });

  it('answers the Prometheus text format, which a Prometheus parser reads, with the event-loop lag', async () => {
    const response = await t.app.inject({ url: '/metrics', headers: { authorization: `bearer ${TOKEN}` } });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.equal(response.headers['cache-control'], 'no-store');
    const families = parseMetrics(response.body);
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'process_resident_memory_bytes', 'tessera_http_requests_total', 'tessera_http_request_duration_seconds']) {
      assert.ok(families.some((family) => family.name === name), `${name} is served`);
    }
    assert.equal(families.find((family) => family.name === 'tessera_http_request_duration_seconds')?.type, 'HISTOGRAM');
  });

  it('counts requests and their durations by route pattern, method and status: 3 GET /api/user add 3', async () => {
    const labels = { method: 'GET', route: '/api/user', status: '200' };
    const beforeText = await scrapeText();
    const before = parseMetrics(beforeText);
    for (let i = 0; i < 3; i += 1) {
      const response = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${apiToken}`, accept: 'application/json' } });
      assert.equal(response.statusCode, 200);
    }
    const refused = await t.app.inject({ url: '/api/user', headers: { accept: 'application/json' } });
    assert.equal(refused.statusCode, 401);
    const nowText = await scrapeText();
    const now = parseMetrics(nowText);
    assert.equal(valueOf(now, 'tessera_http_requests_total', labels) - valueOf(before, 'tessera_http_requests_total', labels), 3);
    const timed = (text: string) => valueOf(histogramCounts(text, 'tessera_http_request_duration_seconds'), 'tessera_http_request_duration_seconds_count', labels);
    assert.equal(timed(nowText) - timed(beforeText), 3);
    // The buckets are cumulative and end at the count (`le="+Inf"`), as Prometheus reads them.
    const buckets = nowText
      .split('\n')
      .filter((line) => line.startsWith('tessera_http_request_duration_seconds_bucket{method="GET",route="/api/user",status="200",'))
      .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
    assert.ok(buckets.length > 1);
    assert.deepEqual(buckets, [...buckets].sort((a, b) => a - b));
    assert.equal(buckets.at(-1), timed(nowText));
    const unauthenticated = { ...labels, status: '401' };
    assert.equal(valueOf(now, 'tessera_http_requests_total', unauthenticated) - valueOf(before, 'tessera_http_requests_total', unauthenticated), 1);
  });

  it('labels a request by its route pattern, never by the path or query asked for; no route is "(unmatched)"', async () => {
    const secret = 'b0a1c2d3e4f5secret';
    const before = await scrape();
    await t.app.inject({ url: `/blog/some-slug-${secret}?x=1&token=${secret}` });
    await t.app.inject({ url: `/api/posts/${secret}?page=${secret}`, headers: { accept: 'application/json' } });
    await t.app.inject({ url: `/reset-password/${secret}?email=someone%40example.com` });
    await t.app.inject({ url: `/no/such/${secret}?q=${secret}` });
    const now = await scrape();
    const rose = (route: string) =>
      series(now, 'tessera_http_requests_total', { route }).reduce((sum, sample) => sum + Number(sample.value), 0) -
      series(before, 'tessera_http_requests_total', { route }).reduce((sum, sample) => sum + Number(sample.value), 0);
    assert.equal(rose('/blog/:slug'), 1);
    assert.equal(rose('/api/posts/:slug'), 1);
    assert.equal(rose('(unmatched)'), 1);
    const values = labelValues(now);
    assert.deepEqual(values.filter((value) => value.includes(secret) || value.includes('?') || value.includes('some-slug') || value.includes('example.com')), []);
  });

  it('counts sign-ins by realm, method and outcome: a refused and an accepted password, a two-factor code', async () => {
    const key = (realm: string, method: string, outcome: string) => ({ realm, method, outcome });
    const before = await scrape();
    const wrong = await t.app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: 'not the password', device_name: 'x' } });
    assert.equal(wrong.statusCode, 401);
    await issueToken(t.app, user.email, user.plainPassword);

    // The site: a refused password, then an account with two-factor on (the code comes next, then signs in).
    const other = await createUser(t.app);
    const { secret } = await enableTwoFactor(t.app, other.id);
    const client = new WebClient(t.app);
    const refused = await client.submit('/login', '/login', { email: other.email, password: 'not the password' });
    assert.equal(refused.statusCode, 422);
    const challenged = await client.submit('/login', '/login', { email: other.email, password: other.plainPassword });
    assert.equal(challenged.headers.location, '/two-factor-challenge');
    const signedIn = await client.submit('/two-factor-challenge', '/two-factor-challenge', { code: await codeAt(secret) });
    assert.equal(signedIn.statusCode, 303);
    assert.equal(signedIn.headers.location, '/dashboard');

    const now = await scrape();
    const rose = (labels: Record<string, string>) => valueOf(now, 'tessera_sign_ins_total', labels) - valueOf(before, 'tessera_sign_ins_total', labels);
    assert.equal(rose(key('api', 'password', 'failed')), 1);
    assert.equal(rose(key('api', 'password', 'succeeded')), 1);
    assert.equal(rose(key('site', 'password', 'failed')), 1);
    assert.equal(rose(key('site', 'password', 'challenged')), 1);
    assert.equal(rose(key('site', 'password+two-factor', 'succeeded')), 1);
    assert.equal(rose(key('site', 'password', 'succeeded')), 0);
  });

  it('shows the rate-limit store as answering, and the PostgreSQL pool where there is one', async () => {
    const families = await scrape();
    assert.equal(valueOf(families, 'tessera_rate_limit_store_up', { store: 'memory' }), 1);
    if (onPostgres) {
      assert.equal(valueOf(families, 'tessera_db_pool_max'), t.db.pool?.options.max);
      const inUse = valueOf(families, 'tessera_db_pool_connections', { state: 'in_use' });
      const idle = valueOf(families, 'tessera_db_pool_connections', { state: 'idle' });
      assert.equal(inUse + idle, t.db.pool?.totalCount);
      assert.equal(valueOf(families, 'tessera_db_pool_waiting'), 0);
    } else {
      // SQLite has one connection and no pool: no pool series at all.
      assert.deepEqual(series(families, 'tessera_db_pool_max'), []);
    }
  });
});

describe(`GET /metrics with RATE_LIMIT_STORE=redis and Redis away (${DB})`, () => {
  let t: TestApp;
  before(async () => {
    // A port nothing listens on: every Redis call fails at once (connection refused).
    const port = await freePort();
    t = await buildTestApp({ METRICS_TOKEN: TOKEN, RATE_LIMIT_STORE: 'redis', REDIS_URL: `redis://127.0.0.1:${port}`, API_RATE_LIMIT: '60' });
  });
  after(async () => t.close());

  it('shows the store down, the breaker open and each call answered without Redis as a fallback', async () => {
    const scrape = async () => parseMetrics((await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body);
    const before = await scrape();
    for (let i = 0; i < 5; i += 1) assert.equal((await t.app.inject({ url: '/api/posts', headers: { accept: 'application/json' } })).statusCode, 200);
    const now = await scrape();
    assert.equal(valueOf(now, 'tessera_rate_limit_store_up', { store: 'redis' }), 0);
    assert.equal(valueOf(now, 'tessera_rate_limit_breaker_state', { state: 'open' }) + valueOf(now, 'tessera_rate_limit_breaker_state', { state: 'half-open' }), 1);
    assert.equal(valueOf(now, 'tessera_rate_limit_breaker_state', { state: 'closed' }), 0);
    assert.ok(valueOf(now, 'tessera_rate_limit_store_fallbacks_total') - valueOf(before, 'tessera_rate_limit_store_fallbacks_total') >= 5);
  });
});

describe(`GET /metrics with RATE_LIMIT_STORE=database and its table gone (${DB})`, () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ METRICS_TOKEN: TOKEN, RATE_LIMIT_STORE: 'database', API_RATE_LIMIT: '60', LOGIN_RATE_LIMIT: '5' });
  });
  after(async () => t.close());

  it('shows the store down and counts each call answered without it, the request limit and the password throttle alike', async () => {
    const scrape = async () => parseMetrics((await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body);
    const before = await scrape();
    assert.equal(valueOf(before, 'tessera_rate_limit_store_up', { store: 'database' }), 1);
    // An honest failure of the store's own query, as test/faults/redis-down.test.ts makes it.
    await sql`alter table rate_limits rename to rate_limits_away`.execute(t.db.kysely);
    try {
      for (let i = 0; i < 3; i += 1) assert.equal((await t.app.inject({ url: '/api/posts', headers: { accept: 'application/json' } })).statusCode, 200);
      const wrong = await t.app.inject({ method: 'POST', url: '/api/tokens', headers: { accept: 'application/json' }, payload: { email: 'nobody@example.com', password: 'wrong password', device_name: 'd' } });
      assert.equal(wrong.statusCode, 401);
      const now = await scrape();
      assert.equal(valueOf(now, 'tessera_rate_limit_store_up', { store: 'database' }), 0);
      // 3 requests let through, and the token issue's limit and throttle counted in this process.
      assert.ok(valueOf(now, 'tessera_rate_limit_store_fallbacks_total') - valueOf(before, 'tessera_rate_limit_store_fallbacks_total') >= 4);
    } finally {
      await sql`alter table rate_limits_away rename to rate_limits`.execute(t.db.kysely);
    }
  });
});

describe('the fence around prom-client', { skip: oncePerRun('the source tree') }, () => {
  it('is imported by the metrics plugin and the cluster only (the domain reports through SignInService.observe)', () => {
    const src = new URL('../../src/', import.meta.url).pathname;
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : []));
    const importing = files(src)
      .filter((file) => /from 'prom-client'/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(src, file))
      .sort();
    assert.deepEqual(importing, ['cluster.ts', 'plugins/metrics.ts']);
  });
});
