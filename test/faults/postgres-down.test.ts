// PostgreSQL going away while the service runs. The shared PostgreSQL server is never stopped:
// the service reaches it through a TCP proxy owned by this test, which is cut (a stopped server:
// connections reset, port refused) or stalled (a server that no longer answers). Requests must
// get 503 with the envelope within 5 s, never hang or crash the process, GET /up must say
// unhealthy, and the service must recover by itself when the database is back.
// Runs in the PostgreSQL run of the suite (TEST_DATABASE_URL=postgres://…).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSharedDatabase, issueTokenHttp, seedUsers, startServerProcess, type SeededUser, type ServerProcess, type SharedDatabase } from '../load/server-process.js';
import { needsPostgres } from '../support/services.js';
import { TcpProxy } from './tcp-proxy.js';

const UNAVAILABLE = '{"message":"Service Unavailable.","errors":{}}';

type Probe = { name: string; status: number; body: string; ms: number };

describe('PostgreSQL unavailable while serving', { skip: needsPostgres }, () => {
  let database: SharedDatabase;
  let proxy: TcpProxy;
  let server: ServerProcess;
  let user: SeededUser;
  let token: string;
  const figures: string[] = [];

  before(async () => {
    database = await createSharedDatabase('postgres');
    [user] = (await seedUsers(database.db, 1)) as [SeededUser];
    const target = new URL(database.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const port = await proxy.start();
    target.port = String(port);
    server = await startServerProcess({ DATABASE_URL: target.toString(), DATA_DIR: database.dataDir, LOG_LEVEL: 'error' });
    token = await issueTokenHttp(server.url, user.email, user.password);
  });
  after(async () => {
    await server?.stop();
    await proxy?.close();
    await database?.drop();
    if (figures.length > 0) console.log(`FIGURES postgres-down: ${figures.join(' ')}`);
  });

  /** One request; fails the test if it takes longer than 5 s. */
  async function probe(name: string, path: string, init: RequestInit = {}): Promise<Probe> {
    const started = performance.now();
    const response = await fetch(`${server.url}${path}`, { ...init, signal: AbortSignal.timeout(5000) });
    return { name, status: response.status, body: await response.text(), ms: Math.round(performance.now() - started) };
  }

  const auth = () => ({ authorization: `Bearer ${token}`, accept: 'application/json' });
  const everyKind = () =>
    Promise.all([
      probe('GET /api/user', '/api/user', { headers: auth() }),
      probe('PUT /api/user', '/api/user', { method: 'PUT', headers: { ...auth(), 'content-type': 'application/json' }, body: '{"name":"During outage"}' }),
      probe('GET /api/posts', '/api/posts', { headers: { accept: 'application/json' } }),
      probe('GET /api/settings', '/api/settings', { headers: { accept: 'application/json' } }),
      probe('POST /api/tokens', '/api/tokens', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ email: user.email, password: user.password, device_name: 'outage' }),
      }),
      probe('GET /up', '/up'),
    ]);

  function assertUnavailable(probes: Probe[]): void {
    for (const p of probes) {
      assert.equal(p.status, 503, `${p.name} answered ${p.status} ${p.body}`);
      if (p.name === 'GET /up') assert.deepEqual(JSON.parse(p.body), { status: 'unavailable', database: false, rate_limit_store: { kind: 'memory', ok: true } });
      else assert.equal(p.body, UNAVAILABLE, p.name);
    }
    assert.equal(server.child.exitCode, null, 'the process is still running');
  }

  /**
   * Asks GET /up until it is healthy again (at most 100 times, 200 ms apart: a count, so a slow
   * machine only makes each try take longer), then checks reads and writes work.
   */
  async function assertRecovered(): Promise<number> {
    const started = performance.now();
    for (let tries = 1; ; tries += 1) {
      const response = await fetch(`${server.url}/up`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
      if (response?.status === 200) break;
      assert.ok(tries < 100, `the service did not recover: GET /up still unhealthy after ${tries} tries`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const recovered = Math.round(performance.now() - started);
    const me = await probe('GET /api/user', '/api/user', { headers: auth() });
    assert.equal(me.status, 200, me.body);
    const write = await probe('PUT /api/user', '/api/user', { method: 'PUT', headers: { ...auth(), 'content-type': 'application/json' }, body: '{"name":"After outage"}' });
    assert.equal(write.status, 200, write.body);
    return recovered;
  }

  it('answers 503 with the envelope within 5 s when PostgreSQL is stopped, /up says unhealthy, and recovers by itself', async () => {
    assert.equal((await probe('GET /up', '/up')).status, 200);
    await proxy.down();
    // Twice: the first round meets pooled connections that were cut, the second finds none to open.
    const first = await everyKind();
    const second = await everyKind();
    assertUnavailable(first);
    assertUnavailable(second);
    await proxy.up();
    const recovered = await assertRecovered();
    figures.push(`stopped: ${first.length + second.length} requests answered 503 (slowest ${Math.max(...[...first, ...second].map((p) => p.ms))}ms), recovered ${recovered}ms after restore;`);
  });

  it('answers 503 with the envelope within 5 s when PostgreSQL stops answering, and recovers by itself', async () => {
    // Warm the pool so that requests meet connections that go silent, not only new ones.
    await Promise.all(Array.from({ length: 5 }, () => probe('GET /api/user', '/api/user', { headers: auth() })));
    proxy.stall();
    const probes = await everyKind();
    assertUnavailable(probes);
    await proxy.up();
    const recovered = await assertRecovered();
    figures.push(`stalled: ${probes.length} requests answered 503 (slowest ${Math.max(...probes.map((p) => p.ms))}ms), recovered ${recovered}ms after restore`);
  });
});
