// Instructions a request, counted by callgrind: what one scenario costs the service's main
// thread, in a figure that does not move with the machine's load (npm run bench's ratios move by
// ±15 % from one turn to the next on this shared machine, and with its mood by a factor of two).
// For comparing two versions of the code, not machines.
//   npm run build && npx tsx bench/instructions.ts user|posts|home|login|dashboard|security|tokens|admin-posts [requests]
// With BENCH_DATABASE_URL=postgres://…/name the service runs on a copy of the data in a new
// PostgreSQL database name_instructions (dropped afterwards).
//
// The compiled service (dist/server.js) runs under valgrind on a seeded SQLite file; 6,000
// requests warm it up (V8 has optimised what it will), then callgrind counts the main thread's
// instructions in three windows of `requests` (3,000 by default) each, sent 10 at a time on
// keep-alive connections, and prints the least a request cost. About a minute.
//
// The script also counts the calls of V8's Runtime_DefineKeyedOwnPropertyInLiteral: ~30 a
// request mean that process.nextTick's queue entries are built through the V8 runtime (a
// fifth more instructions), as V8 11 (Node 20) did after losing its feedback for the tick
// literal in a garbage collection (docs/performance.md).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { signIn, type Visitor } from './pages.js';
import { BENCH_ADMIN_EMAIL, BENCH_EMAIL, BENCH_PASSWORD, copyToPostgres, dropPostgres, seedBenchDatabase, serviceEnv } from './seed.js';

const scenario = process.argv[2] ?? 'user';
const measured = Number(process.argv[3] ?? 3_000);
const WINDOWS = 3;
const WARM_UP = 6_000;
const CONNECTIONS = 10;
const ROOT = new URL('../', import.meta.url).pathname;

if (!existsSync(join(ROOT, 'dist/server.js'))) throw new Error('dist/server.js is missing: npm run build first');
for (const tool of ['valgrind', 'callgrind_control']) {
  try {
    execFileSync(tool, ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error(`${tool} is missing: apt-get install -y valgrind`);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'tessera-instructions-'));
const data = await seedBenchDatabase(join(dir, 'app.db'), { posts: 1_000, tokens: 100 });
let database = join(dir, 'app.db');
const postgres = process.env.BENCH_DATABASE_URL;
if (postgres !== undefined && postgres !== '') {
  const url = new URL(postgres);
  url.pathname = `${url.pathname}_instructions`;
  database = url.toString();
  await copyToPostgres(join(dir, 'app.db'), database);
}
// As in npm run bench: the user with its token, the public list without one.
const scenarios: Record<string, { path: string; headers: Record<string, string>; visitor?: Visitor }> = {
  user: { path: '/api/user', headers: { authorization: `Bearer ${data.token}`, accept: 'application/json' } },
  posts: { path: '/api/posts', headers: { accept: 'application/json' } },
  // Two anonymous pages, as bench/pages.ts asks for them: a kept public page, and a form (a new
  // visitor: no cookie, so each answer makes a guest CSRF secret).
  home: { path: '/', headers: { accept: 'text/html,application/xhtml+xml' } },
  login: { path: '/login', headers: { accept: 'text/html,application/xhtml+xml' } },
  // Signed-in pages, with the cookie of a session made through the form once the service listens.
  dashboard: { path: '/dashboard', headers: { accept: 'text/html,application/xhtml+xml' }, visitor: 'user' },
  security: { path: '/security', headers: { accept: 'text/html,application/xhtml+xml' }, visitor: 'user' },
  tokens: { path: '/user/api-tokens', headers: { accept: 'text/html,application/xhtml+xml' }, visitor: 'user' },
  'admin-posts': { path: '/admin/posts', headers: { accept: 'text/html,application/xhtml+xml' }, visitor: 'admin' },
};
const chosen = scenarios[scenario];
if (chosen === undefined) throw new Error(`unknown scenario ${scenario}; one of ${Object.keys(scenarios).join(', ')}`);
const { path, headers, visitor } = chosen;
const port = 20_000 + Math.floor(Math.random() * 20_000);

const out = join(dir, 'callgrind.out');
const child = spawn(
  'valgrind',
  ['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', '--dump-instr=no', `--callgrind-out-file=${out}`, process.execPath, 'dist/server.js'],
  {
    cwd: ROOT,
    stdio: 'ignore',
    // No HOST (127.0.0.1 is the default): valgrind names the files callgrind_control finds it
    // by after $HOST, which callgrind_control reads from its own environment.
    // METRICS_TOKEN passes through: the cost of GET /metrics' counting (docs/metrics.md).
    env: { PATH: process.env.PATH ?? '', ...serviceEnv(database, dir), PORT: String(port), ...(process.env.METRICS_TOKEN === undefined ? {} : { METRICS_TOKEN: process.env.METRICS_TOKEN }) },
  },
);

const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
function get(): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}
async function send(count: number): Promise<void> {
  let left = count;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (left-- > 0) {
        const status = await get();
        if (status !== 200) throw new Error(`${path} answered ${status}`);
      }
    }),
  );
}

try {
  const deadline = Date.now() + 240_000;
  for (;;) {
    try {
      // Any answer: a signed-in page redirects until the cookie is made below.
      await get();
      break;
    } catch {
      // not listening yet: valgrind starts node slowly
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('the service did not start under valgrind');
    await sleep(1_000);
  }
  if (visitor === 'user' || visitor === 'admin') {
    const origin = `http://127.0.0.1:${port}`;
    headers.cookie = visitor === 'user' ? await signIn(origin, '/login', BENCH_EMAIL, BENCH_PASSWORD) : await signIn(origin, '/admin/login', BENCH_ADMIN_EMAIL, BENCH_PASSWORD);
  }
  await send(WARM_UP);
  // Each window's counts are dumped (and reset) on their own: a window in which a full
  // collection of the old generation runs costs tens of thousands of instructions a request
  // more, so the least a request costs is the figure to compare.
  execFileSync('callgrind_control', ['-i', 'on', String(child.pid)], { stdio: 'ignore' });
  for (let window = 0; window < WINDOWS; window += 1) {
    await send(measured);
    execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
  }
  execFileSync('callgrind_control', ['-i', 'off', String(child.pid)], { stdio: 'ignore' });

  const windows = Array.from({ length: WINDOWS }, (_, index) => {
    // The dump of the main thread (thread 1): its summary line, and the calls into the runtime
    // function that marks the slow tick literal described above.
    const file = join(dir, `callgrind.out.${index + 1}-01`);
    if (!existsSync(file)) throw new Error(`callgrind wrote no dump ${index + 1} of the main thread`);
    const text = readFileSync(file, 'utf8');
    const total = Number(/^summary: (\d+)$/m.exec(text)?.[1] ?? NaN);
    // callgrind names a function in full once, where it first appears (fn= or cfn=), by number after.
    const marker = /^c?fn=\((\d+)\) .*Runtime_DefineKeyedOwnPropertyInLiteral/m.exec(text)?.[1];
    let slowLiterals = 0;
    if (marker !== undefined) {
      for (const match of text.matchAll(new RegExp(`^cfn=\\(${marker}\\).*\\ncalls=(\\d+)`, 'gm'))) slowLiterals += Number(match[1]);
    }
    return { perRequest: total / measured, slowLiterals: slowLiterals / measured };
  });
  const best = Math.min(...windows.map((window) => window.perRequest));
  const figure = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(`${scenario} (${path}): ${figure(best)} instructions a request on the main thread, the least of ${WINDOWS} windows of ${measured.toLocaleString('en-US')} requests after ${WARM_UP.toLocaleString('en-US')}`);
  console.log(`  windows: ${windows.map((window) => figure(window.perRequest)).join(', ')}`);
  const slow = Math.max(...windows.map((window) => window.slowLiterals));
  console.log(
    slow >= 5
      ? `  process.nextTick's entries went through the V8 runtime (${slow.toFixed(1)} literal definitions a request)`
      : `  process.nextTick on its fast path (${slow.toFixed(1)} runtime literal definitions a request)`,
  );
} finally {
  agent.destroy();
  child.kill('SIGKILL');
  if (process.env.KEEP === undefined) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
  // Once the service is gone (a database in use cannot be dropped).
  if (database.startsWith('postgres')) {
    if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
    await dropPostgres(database);
  }
}
