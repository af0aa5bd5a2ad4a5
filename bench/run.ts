// `npm run bench`: seeds SQLite databases (and, given BENCH_DATABASE_URL=postgres://…/name, copies
// them into new PostgreSQL databases name_small and name_large, dropped at the end), starts the
// service (bench/server.ts) and a bare node:http server (bench/bare.ts) as child processes, loads
// them in turn on loopback and prints requests/s, p50/p99 and each ratio against its target, a
// table per database; then GET /api/user with two worker processes against one. The two sides of a ratio are
// measured alternately, REPEATS times each, each side in two processes, and the best turn of each
// side counts: drift and other work on the machine then weigh on both sides alike. Then the site's
// pages (bench/pages.ts), signed in where they need it, against the same bare server, a table per
// database. `--quick` (or BENCH_QUICK=1) shortens every phase for a smoke run; `--only workers` runs
// only the worker scenario, `--only redis` only the frozen-Redis one, `--only pages` only the pages
// (on both databases given BENCH_DATABASE_URL, about six minutes). The full run takes about
// seventeen minutes with PostgreSQL.
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BareMessage } from './bare.js';
import { load, loadTool, type LoadResult, type Request } from './load.js';
import { BLOG, notThePage, PAGE_TARGETS, PAGES, pageRequest, signIn, type Cookies, type Page } from './pages.js';
import { BENCH_ADMIN_EMAIL, BENCH_EMAIL, BENCH_PASSWORD, copyToPostgres, dropPostgres, seedBenchDatabase, serviceEnv, type BenchData } from './seed.js';
import type { ParentMessage, ServerMessage } from './server.js';
import { underSlowloris } from './slowloris.js';
import { OwnRedis } from '../test/support/redis-server.js';

const quick = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
/** `--only workers`: only the worker-process scenario (a minute rather than eleven). */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const onlyWorkers = only === 'workers';
/** `--only redis`: only the frozen-Redis scenario (about a minute). */
const onlyRedis = only === 'redis';
/** `--only pages`: only the site's pages, on each database (under six minutes with PostgreSQL). */
const onlyPages = only === 'pages';
if (only !== undefined && !onlyWorkers && !onlyRedis && !onlyPages) throw new Error(`--only ${only}: one of workers, redis, pages`);
const SECONDS = quick ? 3 : 10;
// Many short turns rather than two long ones: on a shared machine whose speed drifts from one
// minute to the next, the best of many turns is far steadier than the best of two. Eight, not
// five: on 2026-11-22 single 2-second turns of the same process ranged from 17,000 to 40,000
// requests/s, and two processes of the same code on copies of one database came out 0.81× to
// 1.12× of each other as the best of five or six.
const REPEATS = quick ? 1 : 8;
/** The length of one turn of a ratio's measurement. */
const TURN_SECONDS = quick ? 3 : 2;
const WARMUP = quick ? 1 : 3;
/** How the two sides of a ratio are measured (see compare). */
type Timing = { warmup: number; repeats: number; turnSeconds: number };
const TIMING: Timing = { warmup: WARMUP, repeats: REPEATS, turnSeconds: TURN_SECONDS };
/**
 * The pages' rows: thirteen ratios and the blog's large against small, on each database, would
 * take twenty minutes at the API's timing. Each row warms up the service's two processes on its
 * page for PAGE_WARMUP s, both at once (the bare servers, warm after their first row, need none),
 * then takes four turns of 1 s a side: about 9 s a row. A page answers a few thousand requests a second, so a
 * warm-up of all pages at once would leave each a few hundred: not enough for V8 to optimise it
 * (the first rows then cost twice the CPU a request of the same page measured later).
 */
const PAGE_WARMUP = 1;
const PAGE_TIMING: Timing = { warmup: 0, repeats: quick ? 1 : 4, turnSeconds: 1 };
const RSS_AT = quick ? [5, 15] : [10, 60];
const CONNECTIONS = 10;
const LOGIN_CONNECTIONS = 8;
/** Slow sockets kept open in the slowloris scenario. */
const SLOW_SOCKETS = 500;
const WORKER_CONNECTIONS = 50;
/** Requests each connection pipelines in the worker scenario's measurement with a target (see benchWorkers). */
const PIPELINE = 8;

const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-'));
const children = new Set<ChildProcess>();
/** PostgreSQL databases made for this run, dropped at its end. */
const postgresDatabases: string[] = [];

type Child = { process: ChildProcess; origin: string };

/**
 * Node's flags for the processes measured, as `npm start` gives the service: V8 13 (Node 24)
 * otherwise lets the young generation grow to 64 MiB semi-spaces, and a process under steady load
 * went from 217 to 314 MiB of RSS in a minute with a live heap that stayed at 36-39 MiB.
 */
const NODE_FLAGS = ['--max-semi-space-size=16'];

function start(script: string, env: Record<string, string>): Promise<Child> {
  const child = fork(new URL(script, import.meta.url).pathname, [], {
    execArgv: [...NODE_FLAGS, '--import', 'tsx'],
    // The service logs one line per request, as in production; the lines go to /dev/null.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
    child.once('message', (message: ServerMessage) => {
      if (message.type === 'ready') resolve({ process: child, origin: `http://127.0.0.1:${message.port}` });
    });
  });
}

async function stop(child: Child): Promise<void> {
  if (child.process.exitCode !== null) return;
  const exited = new Promise((resolve) => child.process.once('exit', resolve));
  child.process.kill('SIGTERM');
  await exited;
}

function startService(database: string): Promise<Child> {
  return start('./server.ts', serviceEnv(database, dir));
}

/** CPU seconds (user + system, every thread) the process and its child processes (workers) have used so far. */
function cpuSeconds(pid: number): number {
  const own = (id: number) => {
    try {
      const fields = readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return 0;
    }
  };
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
  } catch {
    // No such process any more.
  }
  return own(pid) + children.reduce((sum, child) => sum + own(child), 0);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/**
 * The service as `npm start` runs it (src/server.ts) with WEB_CONCURRENCY worker processes on
 * one port; ready once /up answers. Several workers need a shared limit store (the limits
 * themselves are off, as everywhere in the bench).
 */
async function startWorkers(database: string, workers: number): Promise<Child> {
  const port = await freePort();
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', new URL('../src/server.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { PATH: process.env.PATH ?? '', ...serviceEnv(database, dir), HOST: '127.0.0.1', PORT: String(port), WEB_CONCURRENCY: String(workers), RATE_LIMIT_STORE: 'database' },
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const origin = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 300; tries += 1) {
    if (child.exitCode !== null) throw new Error(`the service with ${workers} workers exited with ${child.exitCode} before it was ready`);
    const up = await fetch(`${origin}/up`).then((response) => response.ok, () => false);
    if (up) return { process: child, origin };
    await sleep(100);
  }
  throw new Error(`the service with ${workers} workers did not answer /up within 30 s`);
}

/**
 * GET /api/user with two worker processes against one (WEB_CONCURRENCY), on SQLite, twice.
 *
 * wrk shares the machine's two cores with the processes it measures. Without pipelining it
 * spends about 6 µs of CPU a request, mostly in the kernel sending and receiving (2026-11-24:
 * 0.54 of a core at 87,000 req/s), so two workers never get two cores: their ratio is capped
 * near 2 − 0.55 − the idle time, about 1.3×, whatever the service does. With each connection
 * pipelining PIPELINE requests, wrk writes once for several and takes about 0.4 of a core at a
 * higher rate: that measurement says how the service scales, and carries the target. The
 * unpipelined one is printed beside it, because that is what clients that wait for each answer
 * (every browser and almost every HTTP library) get on a machine shared with its load. The
 * service's CPU time a request, shown in both rows, says the same per request with 1 or 2 workers.
 */
async function benchWorkers(database: string, data: BenchData): Promise<{ rows: Row[]; all: LoadResult[] }> {
  console.log('\n## Worker processes (SQLite)');
  const one = await startWorkers(database, 1);
  const two = await startWorkers(database, 2);
  // 50 connections on both sides: with 10, each of two workers would get 5 and answer them in
  // smaller batches (src/perf/response-batch.ts) than one process gets 10.
  const side = (workers: 1 | 2, pipeline: number): Side => ({
    label: `GET /api/user, WEB_CONCURRENCY=${workers}, ${WORKER_CONNECTIONS} connections${pipeline > 1 ? `, ${pipeline} requests pipelined on each` : ''}`,
    targets: [workers === 1 ? one : two],
    requests: userRequest(data),
    pipeline,
  });
  const [single, double] = await compare(side(1, 1), side(2, 1), WORKER_CONNECTIONS);
  const [singlePipelined, doublePipelined] = await compare(side(1, PIPELINE), side(2, PIPELINE), WORKER_CONNECTIONS);
  await stop(one);
  await stop(two);
  return {
    rows: [
      { scenario: `GET /api/user with 2 workers, wrk pipelining ${PIPELINE}`, measured: doublePipelined, against: `1 worker (${fmt(singlePipelined.rps)} req/s)`, ratio: doublePipelined.rps / singlePipelined.rps, target: 1.4, higherIsBetter: true },
      { scenario: 'GET /api/user with 2 workers, no pipelining', measured: double, against: `1 worker (${fmt(single.rps)} req/s)`, ratio: double.rps / single.rps, higherIsBetter: true },
    ],
    all: [single, double, singlePipelined, doublePipelined],
  };
}

/**
 * GET /api/user with RATE_LIMIT_STORE=redis (the request limit on, so every request asks Redis)
 * while its Redis is frozen (SIGSTOP) against while it is healthy, on SQLite. Each frozen turn
 * freezes a redis-server of the bench's own just before it starts and lasts SECONDS, so the
 * first second of the freeze, which the requests under way wait out (the client's command
 * timeout) until the breaker opens, counts in it; between turns Redis is thawed and the turn
 * waits for /up to say the store is back (the breaker closed). Healthy and frozen turns alternate.
 */
async function benchFrozenRedis(database: string, data: BenchData): Promise<{ rows: Row[]; all: LoadResult[] }> {
  console.log('\n## A frozen Redis (SQLite)');
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    log('redis-server is not installed: scenario left out');
    return { rows: [], all: [] };
  }
  const redis = new OwnRedis(await freePort());
  await redis.start();
  try {
    const service = await start('./server.ts', { ...serviceEnv(database, dir), RATE_LIMIT_STORE: 'redis', REDIS_URL: redis.url, API_RATE_LIMIT: '100000000' });
    const storeOk = async () => ((await (await fetch(`${service.origin}/up`)).json()) as { status: string }).status === 'ok';
    await load({ origin: service.origin, requests: userRequest(data), seconds: WARMUP, connections: CONNECTIONS });
    let healthy: Measured | undefined;
    let frozen: Measured | undefined;
    for (let i = 0; i < (quick ? 1 : 2); i += 1) {
      healthy = best(healthy, await once(service, userRequest(data), SECONDS, CONNECTIONS));
      redis.signal('SIGSTOP');
      try {
        frozen = best(frozen, await once(service, userRequest(data), SECONDS, CONNECTIONS));
      } finally {
        redis.signal('SIGCONT');
      }
      for (let tries = 0; !(await storeOk()); tries += 1) {
        if (tries > 200) throw new Error('the rate-limit store did not come back within 20 s of the thaw');
        await sleep(100);
      }
    }
    await stop(service);
    report('GET /api/user, RATE_LIMIT_STORE=redis, healthy', healthy!);
    report(`GET /api/user, RATE_LIMIT_STORE=redis, frozen (SIGSTOP) for the ${SECONDS} s measured`, frozen!);
    return {
      rows: [{ scenario: 'GET /api/user while Redis is frozen', measured: frozen!, against: `Redis healthy (${fmt(healthy!.rps)} req/s)`, ratio: frozen!.rps / healthy!.rps, target: 0.5, higherIsBetter: true }],
      all: [healthy!, frozen!],
    };
  } finally {
    await redis.stop();
  }
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  return kib / 1024;
}

type Captured = BareMessage['bodies'][string];

/** The response the bare server must repeat, checked to be a 200 (a redirect is not followed) and, for a page, to be the page. */
async function capture(origin: string, request: Request, page?: Page): Promise<Captured> {
  const response = await fetch(origin + request.path, { headers: request.headers ?? {}, redirect: 'manual' });
  const body = await response.text();
  const wrong = page === undefined ? (response.status === 200 ? null : `answered ${response.status}`) : notThePage(page, response.status, body);
  if (wrong !== null) throw new Error(`${request.path} on ${origin} ${wrong}${response.headers.has('location') ? ` (to ${response.headers.get('location')})` : ''}: ${body.slice(0, 300)}`);
  return { body, contentType: response.headers.get('content-type') ?? 'application/octet-stream' };
}

/** A bare server answering these bodies. */
async function startBare(bodies: BareMessage['bodies']): Promise<Child> {
  const bare = await start('./bare.ts', {});
  bare.process.send({ type: 'bodies', bodies } satisfies BareMessage);
  await new Promise((resolve) => bare.process.once('message', resolve));
  return bare;
}

type Measured = LoadResult & { cpuUsPerRequest: number };

// Besides throughput, the server's CPU time per request: it varies far less than requests/s
// when other processes share the machine, so it says what a request costs.
async function once(target: Child, requests: Request[], seconds: number, connections: number, pipeline = 1): Promise<Measured> {
  const pid = target.process.pid ?? 0;
  const before = cpuSeconds(pid);
  const result = await load({ origin: target.origin, requests, seconds, connections, pipeline });
  return { ...result, cpuUsPerRequest: ((cpuSeconds(pid) - before) / Math.max(1, result.requests)) * 1e6 };
}

const best = (a: Measured | undefined, b: Measured): Measured => (a === undefined || b.rps > a.rps ? b : a);

function report(label: string, m: Measured): void {
  log(`${label}: ${fmt(m.rps)} req/s, p50 ${m.p50ms.toFixed(2)} ms, p99 ${m.p99ms.toFixed(2)} ms, ${m.cpuUsPerRequest.toFixed(0)} µs CPU/request${problems(m)}`);
}

/** One side of a ratio: the same requests to each of its processes (see compare), or each process's own (a session signed in on it). */
type Side = { label: string; targets: Child[]; requests: Request[] | ((target: Child) => Request[]); pipeline?: number };

const requestsOf = (side: Side, target: Child): Request[] => (typeof side.requests === 'function' ? side.requests(target) : side.requests);

/**
 * Both sides of a ratio, warmed up, then measured alternately; the best turn of each counts.
 * A B, B A, A B…: neither side always runs right after the other or right after a pause. Each
 * side runs in two processes (started at different points, turns shared between them): on this
 * machine one process of the same code on the same data can cost 10-15 % more CPU a request
 * than another for its whole life (2026-11-22: the 100,000-token process, started second, was
 * the dearer in five full runs of six, 0.85-0.88×; started first, 0.98×), which one process a
 * side would put into the ratio.
 */
async function compare(a: Side, b: Side, connections = CONNECTIONS, timing = TIMING): Promise<[Measured, Measured]> {
  for (const side of [a, b]) {
    if (timing.warmup === 0) break;
    for (const target of side.targets) await load({ origin: target.origin, requests: requestsOf(side, target), seconds: timing.warmup, connections, pipeline: side.pipeline ?? 1 });
  }
  const bests = new Map<Side, Measured>();
  for (let i = 0; i < timing.repeats; i += 1) {
    for (const side of i % 2 === 0 ? [a, b] : [b, a]) {
      const target = side.targets[Math.floor(i / 2) % side.targets.length]!;
      bests.set(side, best(bests.get(side), await once(target, requestsOf(side, target), timing.turnSeconds, connections, side.pipeline)));
    }
  }
  const bestA = bests.get(a);
  const bestB = bests.get(b);
  report(a.label, bestA!);
  report(b.label, bestB!);
  return [bestA!, bestB!];
}

function problems(result: LoadResult): string {
  return result.errors + result.non2xx === 0 ? '' : ` (${result.errors} socket errors, ${result.non2xx} non-2xx!)`;
}

const log = (line: string) => process.stderr.write(`  ${line}\n`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** A row of a table; one without a target is shown for comparison, neither PASS nor MISS. */
type Row = { scenario: string; measured: LoadResult | number; against: string; ratio: number; target?: number; higherIsBetter: boolean };

const userRequest = (data: BenchData): Request[] => [{ path: '/api/user', headers: { authorization: `Bearer ${data.token}`, accept: 'application/json' } }];
const postsRequest: Request[] = [{ path: '/api/posts', headers: { accept: 'application/json' } }];
const loginRequest: Request[] = [
  {
    method: 'POST',
    path: '/api/tokens',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ email: BENCH_EMAIL, password: BENCH_PASSWORD, device_name: 'bench' }),
  },
];

/**
 * Where the service under measurement finds its data: each data set twice, one for each of its
 * two processes (on SQLite a copy of the file, so neither's writes — last_used_at — empty the
 * other's read caches; on PostgreSQL one database, where such a write drops nothing).
 */
type Target = { name: string; small: [string, string]; large: [string, string] };

/** The service on both data sets, two processes each, started in opposite orders (see compare). */
async function startServices(target: Target): Promise<{ services: [Child, Child]; largeServices: [Child, Child] }> {
  const service = await startService(target.small[0]);
  const largeService = await startService(target.large[0]);
  const largeService2 = await startService(target.large[1]);
  const service2 = await startService(target.small[1]);
  return { services: [service, service2], largeServices: [largeService, largeService2] };
}

/** Every scenario on one database; the rows of its table and every measurement. */
async function benchDatabase(target: Target, small: BenchData, large: BenchData): Promise<{ rows: Row[]; all: LoadResult[] }> {
  const rows: Row[] = [];

  // --- the service on both data sets, and the bare server with the service's own bytes ---
  const { services, largeServices } = await startServices(target);
  const [service, service2] = services;
  const userBody = await capture(service.origin, userRequest(small)[0]!);
  const postsBody = await capture(service.origin, postsRequest[0]!);
  if ((JSON.parse(postsBody.body) as { data: unknown[] }).data.length !== 15) throw new Error('GET /api/posts did not answer 15 items');
  for (const target of [service2, ...largeServices]) await capture(target.origin, userRequest(target === service2 ? small : large)[0]!);
  const bares = [await startBare({ '/api/user': userBody, '/api/posts': postsBody }), await startBare({ '/api/user': userBody, '/api/posts': postsBody })];

  const [bareUser, user] = await compare(
    { label: 'bare node:http, /api/user bytes', targets: bares, requests: userRequest(small) },
    { label: 'GET /api/user (100 tokens)', targets: services, requests: userRequest(small) },
  );
  const [barePosts, posts] = await compare(
    { label: 'bare node:http, /api/posts bytes', targets: bares, requests: postsRequest },
    { label: 'GET /api/posts, 15 items (1,000 posts)', targets: services, requests: postsRequest },
  );
  for (const bare of bares) await stop(bare);
  // One round trip a request would cap PostgreSQL far lower; its target is lower too.
  const userTarget = target.name === 'PostgreSQL' ? 0.3 : 0.5;
  rows.push({ scenario: 'GET /api/user with a valid token', measured: user, against: 'bare node:http', ratio: user.rps / bareUser.rps, target: userTarget, higherIsBetter: true });
  rows.push({ scenario: 'GET /api/posts, 15 items', measured: posts, against: 'bare node:http', ratio: posts.rps / barePosts.rps, target: 0.3, higherIsBetter: true });

  const [postsSmall, postsLarge] = await compare(
    { label: 'GET /api/posts, 15 items (1,000 posts)', targets: services, requests: postsRequest },
    { label: 'GET /api/posts, 15 items (100,000 posts)', targets: largeServices, requests: postsRequest },
  );
  rows.push({ scenario: 'GET /api/posts with 100,000 posts', measured: postsLarge, against: 'with 1,000 posts', ratio: postsLarge.rps / postsSmall.rps, target: 0.5, higherIsBetter: true });
  const [userSmall, userLarge] = await compare(
    { label: 'GET /api/user (100 tokens)', targets: services, requests: userRequest(small) },
    { label: 'GET /api/user (100,000 tokens)', targets: largeServices, requests: userRequest(large) },
  );
  for (const target of [service2, ...largeServices]) await stop(target);
  rows.push({ scenario: 'token validation with 100,000 tokens', measured: userLarge, against: 'with 100 tokens', ratio: userLarge.rps / userSmall.rps, target: 0.9, higherIsBetter: true });

  // --- logins: POST /api/tokens against raw argon2id in the same process, and reads meanwhile ---
  service.process.send({ type: 'argon2', concurrency: LOGIN_CONNECTIONS, seconds: SECONDS } satisfies ParentMessage);
  const argon2 = await new Promise<{ perSecond: number; libraryPerSecond: number }>((resolve) =>
    service.process.on('message', (message: ServerMessage) => {
      if (message.type === 'argon2') resolve(message);
    }),
  );
  log(`argon2id verify in the service process, ${LOGIN_CONNECTIONS} at a time: ${argon2.perSecond.toFixed(1)} /s through the service's verifyPassword, ${argon2.libraryPerSecond.toFixed(1)} /s calling @node-rs/argon2 directly`);
  await load({ origin: service.origin, requests: loginRequest, seconds: WARMUP, connections: LOGIN_CONNECTIONS });
  const logins = await once(service, loginRequest, SECONDS, LOGIN_CONNECTIONS);
  report('POST /api/tokens', logins);
  rows.push({ scenario: 'POST /api/tokens', measured: logins, against: 'raw argon2id verify', ratio: logins.rps / argon2.perSecond, target: 0.8, higherIsBetter: true });

  // Reads alone, then the same reads while logins flood the service, measured back to back.
  const userAlone = await once(service, userRequest(small), SECONDS, CONNECTIONS);
  const flood = load({ origin: service.origin, requests: loginRequest, seconds: SECONDS + 2, connections: LOGIN_CONNECTIONS });
  await sleep(1000);
  const userDuringFlood = await once(service, userRequest(small), SECONDS, CONNECTIONS);
  const floodResult = await flood;
  report('GET /api/user alone', userAlone);
  report(`GET /api/user during a login flood (logins meanwhile: ${fmt(floodResult.rps)} /s)`, userDuringFlood);
  rows.push({ scenario: 'GET /api/user during a login flood', measured: userDuringFlood, against: 'GET /api/user alone', ratio: userDuringFlood.rps / userAlone.rps, target: 0.3, higherIsBetter: true });
  await stop(service);

  // --- reads while slowloris sockets stay open (closed by REQUEST_TIMEOUT, reopened at once) ---
  const guarded = await start('./server.ts', { ...serviceEnv(target.small[0], dir), REQUEST_TIMEOUT: '2000' });
  await load({ origin: guarded.origin, requests: userRequest(small), seconds: WARMUP, connections: CONNECTIONS });
  const userUnattacked = await once(guarded, userRequest(small), SECONDS, CONNECTIONS);
  const port = Number(new URL(guarded.origin).port);
  const { result: userUnderSlowloris, outcomes } = await underSlowloris(port, SLOW_SOCKETS, 30_000, () => once(guarded, userRequest(small), SECONDS, CONNECTIONS));
  await stop(guarded);
  report('GET /api/user, REQUEST_TIMEOUT=2000', userUnattacked);
  report(`GET /api/user with ${SLOW_SOCKETS} slowloris sockets open (${outcomes.length} opened in all)`, userUnderSlowloris);
  rows.push({ scenario: `GET /api/user with ${SLOW_SOCKETS} slowloris sockets open`, measured: userUnderSlowloris, against: 'GET /api/user alone', ratio: userUnderSlowloris.rps / userUnattacked.rps, target: 0.8, higherIsBetter: true });

  // --- resident memory under a steady mixed load, on a fresh process ---
  const steady = await startService(target.small[0]);
  const mixed: Request[] = [
    ...userRequest(small),
    ...postsRequest,
    { path: '/api/posts?locale=fr&page=3&per_page=20', headers: { accept: 'application/json' } },
    { path: '/api/posts/post-number-999', headers: { accept: 'application/json' } },
    { path: '/api/settings', headers: { accept: 'application/json' } },
  ];
  const [first = 10, second = 60] = RSS_AT;
  const steadyLoad = load({ origin: steady.origin, requests: mixed, seconds: second, connections: CONNECTIONS });
  await sleep(first * 1000);
  const rssFirst = rssMiB(steady.process.pid ?? 0);
  await sleep((second - first) * 1000 - 500);
  const rssSecond = rssMiB(steady.process.pid ?? 0);
  const steadyResult = await steadyLoad;
  log(`mixed load for ${second} s: ${fmt(steadyResult.rps)} req/s${problems(steadyResult)}; RSS ${rssFirst.toFixed(1)} MiB at ${first} s, ${rssSecond.toFixed(1)} MiB at ${second} s`);
  await stop(steady);
  rows.push({ scenario: `RSS after ${second} s of load`, measured: rssSecond, against: `after ${first} s (${rssFirst.toFixed(1)} MiB)`, ratio: rssSecond / rssFirst, target: 1.1, higherIsBetter: false });
  const all = [bareUser, user, barePosts, posts, postsSmall, postsLarge, userSmall, userLarge, logins, userAlone, userDuringFlood, userUnattacked, userUnderSlowloris, steadyResult];
  return { rows, all };
}

/**
 * The site's pages (bench/pages.ts) against a bare server sending each page's bytes, then /blog
 * on 100,000 posts against 1,000. Each process of the service is signed in on its own, the user
 * through POST /login and the administrator through POST /admin/login, as a browser would; each
 * answer is checked to be its page when captured and again after its row, so a session lost
 * meanwhile fails the run instead of measuring redirects (wrk counts only 4xx and 5xx as errors).
 */
async function benchPages(target: Target): Promise<{ rows: Row[]; all: LoadResult[] }> {
  console.log(`\n## Pages (${target.name})`);
  const { services, largeServices } = await startServices(target);
  const [service, service2] = services;
  const anonymous: Cookies = { anonymous: '', user: '', admin: '' };
  const cookies = new Map<Child, Cookies>(largeServices.map((large) => [large, anonymous]));
  for (const own of services) {
    const user = await signIn(own.origin, '/login', BENCH_EMAIL, BENCH_PASSWORD);
    const admin = await signIn(own.origin, '/admin/login', BENCH_ADMIN_EMAIL, BENCH_PASSWORD);
    cookies.set(own, { anonymous: '', user, admin });
  }
  const requestOn = (page: Page) => (own: Child) => [pageRequest(page, cookies.get(own)!)];
  const check = async (page: Page, targets: Child[]) => {
    for (const own of targets) await capture(own.origin, requestOn(page)(own)[0]!, page);
  };
  const bodies: BareMessage['bodies'] = {};
  for (const page of PAGES) {
    bodies[page.path] = await capture(service.origin, requestOn(page)(service)[0]!, page);
    await check(page, [service2]);
  }
  await check(BLOG, largeServices);
  const bares = [await startBare(bodies), await startBare(bodies)];
  // Both processes of a side at once: half the time, and still thousands of requests each.
  const warm = async (page: Page, targets: Child[]) => {
    await Promise.all(targets.map((own) => load({ origin: own.origin, requests: requestOn(page)(own), seconds: PAGE_WARMUP, connections: CONNECTIONS })));
  };
  await Promise.all(bares.map((bare) => load({ origin: bare.origin, requests: PAGES.map((page) => pageRequest(page, cookies.get(service)!)), seconds: PAGE_WARMUP, connections: CONNECTIONS })));

  const rows: Row[] = [];
  const all: LoadResult[] = [];
  for (const page of PAGES) {
    await warm(page, services);
    const [bare, measured] = await compare(
      { label: `bare node:http, ${page.path} bytes`, targets: bares, requests: requestOn(page)(service) },
      { label: page.label, targets: services, requests: requestOn(page) },
      CONNECTIONS,
      PAGE_TIMING,
    );
    await check(page, services);
    rows.push({ scenario: page.label, measured, against: `bare node:http (${fmt(bare.rps)} req/s)`, ratio: measured.rps / bare.rps, target: PAGE_TARGETS[page.group], higherIsBetter: true });
    all.push(bare, measured);
  }
  for (const bare of bares) await stop(bare);
  await warm(BLOG, largeServices);
  const [blogSmall, blogLarge] = await compare(
    { label: `${BLOG.label} (1,000 posts)`, targets: services, requests: requestOn(BLOG) },
    { label: `${BLOG.label} (100,000 posts)`, targets: largeServices, requests: requestOn(BLOG) },
    CONNECTIONS,
    PAGE_TIMING,
  );
  await check(BLOG, largeServices);
  rows.push({ scenario: 'GET /blog with 100,000 posts', measured: blogLarge, against: `with 1,000 posts (${fmt(blogSmall.rps)} req/s)`, ratio: blogLarge.rps / blogSmall.rps, target: 0.5, higherIsBetter: true });
  all.push(blogSmall, blogLarge);
  for (const own of [...services, ...largeServices]) await stop(own);
  return { rows, all };
}

/** Seeds the large data set and names each database's targets (PostgreSQL given BENCH_DATABASE_URL). */
async function databaseTargets(): Promise<{ target: Target; large: BenchData }[]> {
  log('seeding: 100,000 posts and 100,000 tokens…');
  const large = await seedBenchDatabase(join(dir, 'large.db'), { posts: 100_000, tokens: 100_000 });
  copyFileSync(join(dir, 'large.db'), join(dir, 'large-2.db'));
  const targets: Target[] = [{ name: 'SQLite', small: [join(dir, 'small.db'), join(dir, 'small-2.db')], large: [join(dir, 'large.db'), join(dir, 'large-2.db')] }];
  const postgres = process.env.BENCH_DATABASE_URL;
  if (postgres !== undefined && postgres !== '') {
    const named = (suffix: string) => {
      const url = new URL(postgres);
      url.pathname = `${url.pathname}_${suffix}`;
      return url.toString();
    };
    const [pgSmall, pgLarge] = [named('small'), named('large')];
    log(`copying both data sets into PostgreSQL (${new URL(pgSmall).pathname.slice(1)}, ${new URL(pgLarge).pathname.slice(1)})…`);
    await copyToPostgres(join(dir, 'small.db'), pgSmall);
    await copyToPostgres(join(dir, 'large.db'), pgLarge);
    postgresDatabases.push(pgSmall, pgLarge);
    targets.push({ name: 'PostgreSQL', small: [pgSmall, pgSmall], large: [pgLarge, pgLarge] });
  }
  return targets.map((target) => ({ target, large }));
}

async function main(): Promise<void> {
  const started = Date.now();
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`Tessera benchmark — ${quick ? 'quick' : 'full'} run, ${cpus().length} cores (${cpu}), Node ${process.version}, load by ${loadTool}`);
  console.log(
    `Each ratio: both sides warmed up ${WARMUP} s, then measured alternately ${REPEATS}× ${TURN_SECONDS} s each, in the order A B, B A…, each side in two processes (best turn counts), ${CONNECTIONS} connections on 127.0.0.1.`,
  );
  if (!onlyWorkers && !onlyRedis) {
    console.log(`Pages: the service's processes warmed up ${PAGE_WARMUP} s on each page, then each ratio measured alternately ${PAGE_TIMING.repeats}× ${PAGE_TIMING.turnSeconds} s a side, as above.`);
  }
  // Other work on the machine lowers every figure; the load average says how quiet it was.
  console.log(`Load average before the run: ${loadavg().map((n) => n.toFixed(2)).join(', ')}\n`);

  log('seeding: 1,000 posts and 100 tokens…');
  const small = await seedBenchDatabase(join(dir, 'small.db'), { posts: 1_000, tokens: 100 });
  copyFileSync(join(dir, 'small.db'), join(dir, 'small-2.db'));
  const targets = onlyWorkers || onlyRedis ? [] : await databaseTargets();
  let errors = 0;
  for (const { target, large } of targets) {
    // The pages first: the login rows below issue a token a request (about 1,500 for the bench's
    // user), and the tokens page lists every one of them; measured after them, that row was a
    // page of 3,000 tokens (94 req/s on PostgreSQL, 2026-11-30) instead of the seeded 100.
    errors += tabulate(await benchPages(target));
    if (!onlyPages) {
      console.log(`\n## ${target.name}`);
      errors += tabulate(await benchDatabase(target, small, large));
    }
  }
  const scenarios = [
    ...(onlyRedis || onlyPages ? [] : [() => benchWorkers(join(dir, 'small-2.db'), small)]),
    ...(onlyWorkers || onlyPages ? [] : [() => benchFrozenRedis(join(dir, 'small.db'), small)]),
  ];
  for (const scenario of scenarios) errors += tabulate(await scenario());
  if (errors > 0) console.log(`\nWARNING: ${errors} requests failed or were not 2xx; the figures above are not trustworthy.`);
  console.log(`\nTotal time ${((Date.now() - started) / 1000).toFixed(0)} s; load average after: ${loadavg().map((n) => n.toFixed(2)).join(', ')}.`);
}

/** Prints a scenario's table (if it has rows) and returns how many of its requests failed. */
function tabulate({ rows, all }: { rows: Row[]; all: LoadResult[] }): number {
  if (rows.length > 0) printTable(rows);
  return all.reduce((n, r) => n + r.errors + r.non2xx, 0);
}

function printTable(rows: Row[]): void {
  const lines = rows.map((row) => {
    const measured =
      typeof row.measured === 'number'
        ? `${row.measured.toFixed(1)} MiB`
        : `${fmt(row.measured.rps)} req/s, p50 ${row.measured.p50ms.toFixed(2)} / p99 ${row.measured.p99ms.toFixed(2)} ms` +
          ('cpuUsPerRequest' in row.measured ? `, ${(row.measured as Measured).cpuUsPerRequest.toFixed(0)} µs CPU` : '');
    if (row.target === undefined) return [row.scenario, measured, row.against, `${row.ratio.toFixed(2)}×`, '', ''];
    const pass = row.higherIsBetter ? row.ratio >= row.target : row.ratio <= row.target;
    return [row.scenario, measured, row.against, `${row.ratio.toFixed(2)}×`, `${row.higherIsBetter ? '≥' : '≤'} ${row.target}×`, pass ? 'PASS' : 'MISS'];
  });
  const header = ['scenario', 'measured', 'compared with', 'ratio', 'target', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  console.log(`\n${format(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const line of lines) console.log(format(line));
}

const cleanup = async () => {
  for (const child of children) child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
  for (const url of postgresDatabases) await dropPostgres(url).catch(() => {});
};
process.on('SIGINT', () => {
  void cleanup().then(() => process.exit(130));
});
main().then(
  () => cleanup(),
  async (error: unknown) => {
    console.error(error);
    await cleanup();
    process.exitCode = 1;
  },
);
