// One structured JSON log line per request (method, path, status, duration), and never a token,
// a password or a cookie in any line.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { bearer, createTestDatabase, createUser, issueToken, testConfig, type TestDatabase } from '../helpers.js';
import { WebClient } from '../support/client.js';

type Line = { level: number; msg: string; method?: string; path?: string; status?: number; ms?: number; user?: number | null; ip?: string; [key: string]: unknown };

describe('request log', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  const raw: string[] = [];
  const lines = () => raw.flatMap((chunk) => chunk.split('\n').filter((line) => line !== '')).map((line) => JSON.parse(line) as Line);
  const requestLines = () => lines().filter((line) => line.msg === 'request');

  before(async () => {
    database = await createTestDatabase();
    app = await buildApp(testConfig({ LOG_LEVEL: 'info' }), { db: database.db, loggerStream: { write: (chunk: string) => void raw.push(chunk) } });
    // Failures of their own for the tests that need one logged in full: the same failure again
    // within the interval is counted, not logged (src/lib/failure-log.ts).
    for (const path of ['/api/__boom', '/api/__boom-once', '/api/__boom-first', '/api/__boom-second']) {
      app.get(path, { config: { auth: 'public' } }, async () => {
        throw new Error('kaboom');
      });
    }
    await app.ready();
  });
  after(async () => {
    await app.close();
    await database.drop();
  });

  it('writes exactly one JSON line per request with method, path, status and ms', async () => {
    raw.length = 0;
    await app.inject({ url: '/api/settings' });
    await app.inject({ method: 'POST', url: '/api/tokens', payload: {} });
    await app.inject({ url: '/up' });
    const logged = requestLines();
    assert.equal(logged.length, 3);
    assert.deepEqual(
      logged.map(({ method, path, status }) => ({ method, path, status })),
      [
        { method: 'GET', path: '/api/settings', status: 200 },
        { method: 'POST', path: '/api/tokens', status: 422 },
        { method: 'GET', path: '/up', status: 200 },
      ],
    );
    for (const line of logged) {
      assert.equal(typeof line.ms, 'number');
      assert.ok((line.ms ?? -1) >= 0);
      assert.equal(line.level, 30);
    }
  });

  it('logs the route pattern, not the URL: no slug values, no query string', async () => {
    raw.length = 0;
    await app.inject({ url: '/api/posts/some-secret-slug?token=abc&password=hunter2' });
    await app.inject({ url: '/api/posts?locale=en&api_token=zzz' });
    await app.inject({ url: '/api/no-such-route?x=1' });
    assert.deepEqual(
      requestLines().map(({ path, status }) => ({ path, status })),
      [
        { path: '/api/posts/:slug', status: 404 },
        { path: '/api/posts', status: 200 },
        { path: '(unmatched)', status: 404 },
      ],
    );
    assert.doesNotMatch(raw.join(''), /some-secret-slug|abc|hunter2|zzz/);
  });

  it('never writes a password, a token, a token hash or a cookie', async () => {
    const user = await createUser(app, { password: 'correct-horse-battery-staple' });
    raw.length = 0;
    const login = await app.inject({
      method: 'POST',
      url: '/api/tokens',
      payload: { email: user.email, password: 'correct-horse-battery-staple', device_name: 'logger-device' },
      headers: { cookie: 'tessera_session=cookie-value-123' },
    });
    const token = (login.json() as { token: string }).token;
    const secret = token.split('|')[1] ?? '';
    await app.inject({ method: 'POST', url: '/api/tokens', payload: { email: user.email, password: 'wrong-password-xyz', device_name: 'd' } });
    await app.inject({ url: '/api/user', headers: { authorization: `Bearer ${token}`, cookie: 'tessera_session=cookie-value-123' } });
    await app.inject({
      method: 'PUT',
      url: '/api/user/password',
      headers: { authorization: `Bearer ${token}` },
      payload: { current_password: 'correct-horse-battery-staple', password: 'new-password-456', password_confirmation: 'new-password-456' },
    });
    await app.inject({ url: '/api/__boom', headers: { authorization: `Bearer ${token}` } });
    const text = raw.join('');
    assert.equal(requestLines().length, 5);
    for (const secretText of ['correct-horse-battery-staple', 'wrong-password-xyz', 'new-password-456', secret, secret.slice(0, 40), 'cookie-value-123', 'Bearer']) {
      assert.ok(!text.includes(secretText), `the log contains ${secretText}`);
    }
    const row = await database.db.kysely.selectFrom('personal_access_tokens').select('token').where('name', '=', 'logger-device').executeTakeFirstOrThrow();
    assert.ok(!text.includes(row.token), 'the log contains a token hash');
    assert.doesNotMatch(text, /authorization|"cookie"|argon2/i);
  });

  it('logs a server error once as an error, besides its request line, without the request headers', async () => {
    raw.length = 0;
    await app.inject({ url: '/api/__boom-once', headers: { authorization: 'Bearer 1|abc', cookie: 'a=b' } });
    const errors = lines().filter((line) => line.level >= 50);
    assert.equal(errors.length, 1);
    assert.equal(requestLines().length, 1);
    assert.equal(requestLines()[0]?.status, 500);
    assert.doesNotMatch(raw.join(''), /1\|abc|a=b/);
  });

  it("writes the line pino itself would write for the request's fields, byte for byte but the time", async () => {
    const user = await createUser(app, { password: 'same-as-pino-1' });
    const token = await issueToken(app, user.email, 'same-as-pino-1');
    raw.length = 0;
    await app.inject({ url: '/api/user', headers: bearer(token), remoteAddress: '192.0.2.7' });
    await app.inject({ url: '/api/no-such-route' });
    const ours = raw.join('').split('\n').filter((line) => line !== '');
    assert.equal(ours.length, 2);
    raw.length = 0;
    for (const line of ours) {
      const { reqId, method, path, status, ms, user: who, ip } = JSON.parse(line) as Line;
      app.log.child({ reqId }).info({ method, path, status, ms, user: who, ip }, 'request');
    }
    const pinos = raw.join('').split('\n').filter((line) => line !== '');
    const timeless = (line: string) => line.replace(/"time":\d+/, '"time":0');
    assert.deepEqual(ours.map(timeless), pinos.map(timeless));
    assert.match(ours[0] ?? '', /^\{"level":30,"time":\d+,"pid":\d+,"hostname":"[^"]*","reqId":"[^"]+","method":"GET","path":"\/api\/user","status":200,"ms":[\d.]+,"user":\d+,"ip":"192\.0\.2\.7","msg":"request"\}$/);
  });

  it('escapes what it writes: an address with quotes and backslashes stays one JSON string', async () => {
    raw.length = 0;
    const address = 'x","user":1,"admin":"\\';
    await app.inject({ url: '/api/settings', remoteAddress: address });
    const [line] = requestLines();
    assert.equal(line?.ip, address);
    assert.equal(line?.user, null);
    assert.equal(line?.admin, undefined);
  });

  it('writes no request line when LOG_LEVEL is above info', async () => {
    const quiet: string[] = [];
    const other = await buildApp(testConfig({ LOG_LEVEL: 'warn' }), { db: database.db, loggerStream: { write: (chunk: string) => void quiet.push(chunk) } });
    try {
      await other.inject({ url: '/api/settings' });
      await other.inject({ url: '/api/no-such-route' });
      assert.deepEqual(quiet, []);
    } finally {
      await other.close();
    }
  });

  it("ties each request's lines together by one request id, distinct per request", async () => {
    raw.length = 0;
    await app.inject({ url: '/api/__boom-first' });
    await app.inject({ url: '/api/__boom-second' });
    // The same failure again: its request line only, the failure counted for the interval's line.
    await app.inject({ url: '/api/__boom-second' });
    const [first, second] = requestLines();
    assert.equal(requestLines().length, 3);
    const errors = lines().filter((line) => line.level >= 50);
    assert.equal(errors.length, 2);
    assert.ok(typeof first?.reqId === 'string' && first.reqId !== '', 'the request line carries the request id');
    assert.notEqual(first.reqId, second?.reqId);
    assert.deepEqual(
      errors.map((line) => line.reqId),
      [first.reqId, second?.reqId],
    );
  });

  describe('who and where (ASVS 16.2.1)', () => {
    const lineOf = (method: string, path: string, status: number): Line => {
      const found = requestLines().filter((line) => line.method === method && line.path === path && line.status === status);
      assert.equal(found.length, 1, `one ${method} ${path} ${status} line in ${JSON.stringify(requestLines())}`);
      return found[0]!;
    };

    it('names no user for a visitor, and the client address from the socket', async () => {
      raw.length = 0;
      await app.inject({ url: '/api/settings', remoteAddress: '203.0.113.9' });
      const line = lineOf('GET', '/api/settings', 200);
      assert.equal(line.user, null);
      assert.equal(line.ip, '203.0.113.9');
    });

    it("names the token's user on API calls, and the user a token issue signs in (not on a failed one)", async () => {
      const user = await createUser(app, { password: 'who-and-where-1' });
      const other = await createUser(app);
      raw.length = 0;
      const token = await issueToken(app, user.email, 'who-and-where-1');
      await app.inject({ method: 'POST', url: '/api/tokens', payload: { email: other.email, password: 'not-the-password', device_name: 'd' } });
      await app.inject({ url: '/api/user', headers: bearer(token) });
      await app.inject({ url: '/api/user', headers: bearer(`${token}x`) });
      assert.equal(lineOf('POST', '/api/tokens', 200).user, user.id);
      assert.equal(lineOf('POST', '/api/tokens', 401).user, null);
      assert.equal(lineOf('GET', '/api/user', 200).user, user.id);
      assert.equal(lineOf('GET', '/api/user', 401).user, null);
    });

    it('names the user a site login signs in, and the session user on the pages after it', async () => {
      const user = await createUser(app, { password: 'who-and-where-2' });
      const client = new WebClient(app, { remoteAddress: '198.51.100.4' });
      raw.length = 0;
      await client.get('/login');
      await client.post('/login', { email: user.email, password: 'wrong-password' });
      await client.post('/login', { email: user.email, password: 'who-and-where-2' });
      await client.get('/dashboard');
      assert.equal(lineOf('GET', '/login', 200).user, null);
      assert.equal(lineOf('POST', '/login', 422).user, null);
      const signedIn = lineOf('POST', '/login', 303);
      assert.equal(signedIn.user, user.id);
      assert.equal(signedIn.ip, '198.51.100.4');
      assert.equal(lineOf('GET', '/dashboard', 200).user, user.id);
    });

    it("names the administrator a panel login signs in, and the panel's user after it", async () => {
      const admin = await createUser(app, { password: 'who-and-where-3', admin: true });
      const client = new WebClient(app);
      raw.length = 0;
      await client.get('/admin/login');
      const response = await client.post('/admin/login', { email: admin.email, password: 'who-and-where-3' });
      assert.equal(response.statusCode, 303);
      await client.get('/admin');
      assert.equal(lineOf('POST', '/admin/login', 303).user, admin.id);
      assert.equal(lineOf('GET', '/admin', 200).user, admin.id);
    });
  });
});
