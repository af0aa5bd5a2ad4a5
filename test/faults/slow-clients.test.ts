// Slow and oversized clients against the real process, with REQUEST_TIMEOUT=2000: slowloris
// headers, slow bodies and idle sockets are closed by the server within the timeout (plus Node's
// checking interval), oversized headers get 431 and oversized bodies 413 without being read, and
// the API answers every request while 500 slowloris sockets stay open (how fast it then answers
// is a row of `npm run bench`: a speed, measured on a quiet machine, not asserted here).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SLOWLORIS_START, slowClient, slowHeader, underSlowloris } from '../../bench/slowloris.js';
import { onPostgres } from '../helpers.js';
import { cannon, createSharedDatabase, issueTokenHttp, seedUsers, startServerProcess, type ServerProcess, type SharedDatabase } from '../load/server-process.js';

const TIMEOUT_MS = 2000;
// Node checks request timeouts on a timer (server-limits.ts sets it to a quarter of the timeout),
// and a loaded machine delays timers by seconds; the rest is room for that. With Node's default
// check (every 30 s) a slow socket would outlive the timeout by up to 30 s, far beyond this.
const CLOSED_WITHIN_MS = TIMEOUT_MS + TIMEOUT_MS / 4 + 5000;
const SLOW_SOCKETS = 500;

describe('slow and oversized clients', () => {
  let database: SharedDatabase;
  let server: ServerProcess;
  let token: string;

  before(async () => {
    database = await createSharedDatabase();
    const [user] = await seedUsers(database.db, 1);
    server = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir, REQUEST_TIMEOUT: String(TIMEOUT_MS) });
    token = await issueTokenHttp(server.url, user!.email, user!.password);
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
  });

  const cases: { name: string; start: () => string; drip: (() => string) | null; answer: RegExp | null }[] = [
    { name: 'headers sent one line at a time (slowloris)', start: () => SLOWLORIS_START, drip: slowHeader, answer: /^HTTP\/1\.1 408 .*\{"message":"Request Timeout\.","errors":\{\}\}$/s },
    {
      name: 'a body sent one byte at a time',
      start: () => 'POST /api/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
      drip: () => ' ',
      answer: /^HTTP\/1\.1 408 /,
    },
    { name: 'a connection that never sends anything', start: () => '', drip: null, answer: null },
    { name: 'half a request line, then silence', start: () => 'GET /api/us', drip: null, answer: null },
  ];
  it('closes every kind of slow client within the request timeout (408 once a request has begun)', async () => {
    const outcomes = await Promise.all(cases.map((c) => slowClient(server.port, c.start(), c.drip).done));
    cases.forEach((c, i) => {
      const outcome = outcomes[i]!;
      assert.ok(outcome.closedByServer, `${c.name}: still open after ${outcome.lifetimeMs} ms`);
      assert.ok(outcome.lifetimeMs <= CLOSED_WITHIN_MS, `${c.name}: closed after ${Math.round(outcome.lifetimeMs)} ms`);
      if (c.answer !== null) assert.match(outcome.response, c.answer, c.name);
    });
  });

  it('answers 431 with the envelope to headers over 16 KiB, closes the connection and keeps serving', async () => {
    const { done, socket } = slowClient(server.port, '', null);
    socket.on('connect', () => socket.write(`GET /api/posts HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`));
    const outcome = await done;
    assert.ok(outcome.closedByServer);
    assert.match(outcome.response, /^HTTP\/1\.1 431 .*\r\n\r\n\{"message":"Request Header Fields Too Large\.","errors":\{\}\}$/s);
    const up = await fetch(`${server.url}/up`);
    assert.equal(up.status, 200);
    assert.equal(server.child.exitCode, null);
  });

  it('answers 413 to a body announced over the limit without waiting for it', async () => {
    const { done, socket } = slowClient(server.port, '', null);
    socket.on('connect', () =>
      socket.write('POST /api/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\nConnection: close\r\n\r\n{"email":'),
    );
    const outcome = await done;
    assert.match(outcome.response, /^HTTP\/1\.1 413 .*\{"message":"The request body is too large\.","errors":\{\}\}$/s);
  });

  it(`answers every request while ${SLOW_SOCKETS} slowloris sockets are open, and closes every one in time`, { timeout: 90_000 }, async () => {
    // A number of requests, not a duration: all of them answered 2xx is the rule.
    const requests = 2000;
    const { result, outcomes } = await underSlowloris(server.port, SLOW_SOCKETS, CLOSED_WITHIN_MS * 3, () =>
      cannon({ url: `${server.url}/api/user`, connections: 40, amount: requests, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } }),
    );
    const slowest = Math.max(...outcomes.map((o) => o.lifetimeMs));
    const notClosed = outcomes.filter((o) => !o.closedByServer).length;
    console.log(
      `FIGURES slowloris: db=${onPostgres ? 'postgres' : 'sqlite'} request_timeout=${TIMEOUT_MS}ms slow_sockets_open=${SLOW_SOCKETS} slow_sockets_total=${outcomes.length} ` +
        `closed_by_server=${outcomes.length - notClosed} longest_lived=${Math.round(slowest)}ms requests=${result.requests} rps_under_attack=${Math.round(result.rps)} ` +
        `errors=${result.errors} non2xx=${result.non2xx}`,
    );

    assert.ok(outcomes.length >= SLOW_SOCKETS, `${outcomes.length} slow sockets opened`);
    assert.equal(notClosed, 0, 'every slow socket is closed by the server');
    assert.ok(slowest <= CLOSED_WITHIN_MS, `a slow socket lived ${Math.round(slowest)} ms`);
    assert.ok(result.requests >= requests, `${result.requests} of ${requests} requests answered`);
    assert.equal(result.errors, 0);
    assert.equal(result.non2xx, 0);
  });
});
