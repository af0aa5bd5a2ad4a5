// Slow and oversized clients against the real process, with REQUEST_TIMEOUT=2000: slowloris
// headers, slow bodies and idle sockets are closed by the server within the timeout (plus Node's
// checking interval), oversized headers get 431 and oversized bodies 413 without being read, and
// the API keeps at least 0.8 of its throughput while 500 slowloris sockets stay open.
import assert from 'node:assert/strict';
import { connect as tcpConnect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { onPostgres } from '../helpers.js';
import { cannon, createSharedDatabase, issueTokenHttp, seedUsers, startServerProcess, type ServerProcess, type SharedDatabase } from '../load/server-process.js';

const TIMEOUT_MS = 2000;
// Node checks request timeouts on a timer (server-limits.ts sets it to a quarter of the timeout),
// and a loaded machine delays timers by seconds; the rest is room for that. With Node's default
// check (every 30 s) a slow socket would outlive the timeout by up to 30 s, far beyond this.
const CLOSED_WITHIN_MS = TIMEOUT_MS + TIMEOUT_MS / 4 + 5000;
const SLOW_SOCKETS = 500;

type Outcome = { closedByServer: boolean; lifetimeMs: number; response: string };

/**
 * Opens a socket, writes `start`, then `drip()` every `everyMs` until the server closes it (or
 * `giveUpMs` passes, then it is closed here and counted as not closed by the server).
 */
function slowClient(port: number, start: string, drip: (() => string) | null, everyMs = 500, giveUpMs = 15_000): { done: Promise<Outcome>; socket: Socket } {
  const socket = tcpConnect({ host: '127.0.0.1', port });
  const opened = performance.now();
  let response = '';
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<Outcome>((resolve) => {
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ closedByServer: false, lifetimeMs: performance.now() - opened, response });
    }, giveUpMs);
    socket.on('connect', () => {
      if (start !== '') socket.write(start);
      if (drip !== null) timer = setInterval(() => socket.writable && socket.write(drip()), everyMs);
    });
    socket.on('data', (chunk: Buffer) => (response += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closedByServer: true, lifetimeMs: performance.now() - opened, response });
    });
  });
  return { done, socket };
}

const SLOWLORIS_START = 'GET /api/user HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n';
let dripCounter = 0;
const slowHeader = () => `X-Slow-${++dripCounter}: x\r\n`;

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

  it(`keeps answering without errors while ${SLOW_SOCKETS} slowloris sockets are open (throughput ratio printed), and closes every one in time`, { timeout: 90_000 }, async () => {
    const measure = (duration = 2) =>
      cannon({ url: `${server.url}/api/user`, connections: 40, duration, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    await measure(1); // warm-up

    // The attack: SLOW_SOCKETS sockets kept open, each reopened as soon as the server closes it.
    const outcomes: Outcome[] = [];
    let attacking = false;
    const open = new Set<Promise<void>>();
    const keepOne = (): Promise<void> => {
      const { done } = slowClient(server.port, SLOWLORIS_START, slowHeader, 700, CLOSED_WITHIN_MS * 3);
      const running = done.then((outcome) => {
        outcomes.push(outcome);
        open.delete(running);
        if (attacking) void keepOne();
      });
      open.add(running);
      return running;
    };
    const attack = async <T>(during: () => Promise<T>): Promise<T> => {
      attacking = true;
      for (let i = 0; i < SLOW_SOCKETS; i += 1) void keepOne();
      await new Promise((resolve) => setTimeout(resolve, 300));
      try {
        return await during();
      } finally {
        attacking = false;
      }
    };

    const base1 = await measure();
    const under1 = await attack(() => measure());
    while (open.size > 0) await Promise.all(open);
    const base2 = await measure();
    const under2 = await attack(() => measure());
    while (open.size > 0) await Promise.all(open);

    const base = base1.rps + base2.rps;
    const under = under1.rps + under2.rps;
    const ratio = under / base;
    const slowest = Math.max(...outcomes.map((o) => o.lifetimeMs));
    const notClosed = outcomes.filter((o) => !o.closedByServer).length;
    console.log(
      `FIGURES slowloris: db=${onPostgres ? 'postgres' : 'sqlite'} request_timeout=${TIMEOUT_MS}ms slow_sockets_open=${SLOW_SOCKETS} slow_sockets_total=${outcomes.length} ` +
        `closed_by_server=${outcomes.length - notClosed} longest_lived=${Math.round(slowest)}ms rps_without=${Math.round(base / 2)} rps_with=${Math.round(under / 2)} ratio=${ratio.toFixed(2)} ` +
        `errors=${base1.errors + base2.errors + under1.errors + under2.errors} non2xx=${base1.non2xx + base2.non2xx + under1.non2xx + under2.non2xx}`,
    );

    assert.equal(notClosed, 0, 'every slow socket is closed by the server');
    assert.ok(slowest <= CLOSED_WITHIN_MS, `a slow socket lived ${Math.round(slowest)} ms`);
    assert.equal(base1.errors + base2.errors + under1.errors + under2.errors, 0);
    assert.equal(base1.non2xx + base2.non2xx + under1.non2xx + under2.non2xx, 0);
    // The ratio is a speed, and speed is shown by measurements, not asserted by the suite (a busy
    // CI machine would fail it for reasons of its own): it is printed above, and checked only
    // when asked for on a quiet machine with ASSERT_RATIOS=1.
    if (process.env.ASSERT_RATIOS === '1') assert.ok(ratio >= 0.8, `throughput under attack is ${ratio.toFixed(2)} of normal`);
  });
});
