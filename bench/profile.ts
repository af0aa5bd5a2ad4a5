// Where the time of one scenario goes: runs the service (bench/server.ts) on a seeded SQLite
// database, warms it up, profiles its CPU (the inspector, in the service's process) while one
// request is loaded for a few seconds, then prints the self time by package and by function, and
// the inclusive time of the functions that matter.
//   npx tsx bench/profile.ts user|posts|posts-large|login|<a page of bench/pages.ts, e.g. /security> [seconds]
// A page is asked for as its visitor (signed in on the site or the panel where it needs it).
// With BENCH_DATABASE_URL (postgres://…/name) the data set is copied there and the service runs
// on PostgreSQL.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, type Request } from './load.js';
import { PAGES, pageRequest, signIn, type Cookies } from './pages.js';
import { BENCH_ADMIN_EMAIL, BENCH_EMAIL, BENCH_PASSWORD, copyToPostgres, dropPostgres, seedBenchDatabase, serviceEnv } from './seed.js';
import type { ParentMessage, ServerMessage } from './server.js';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number; children?: number[] };
type Profile = { nodes: Node[]; startTime: number; endTime: number; samples: number[] };

const scenario = process.argv[2] ?? 'user';
const seconds = Number(process.argv[3] ?? 8);
const dir = mkdtempSync(join(tmpdir(), 'tessera-profile-'));

function where(url: string): string {
  if (url === '') return '(native/V8)';
  if (url.startsWith('node:')) return url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg !== undefined) return pkg;
  const own = /\/(src|bench)\/(.*)$/.exec(url);
  return own === null ? url : `${own[1]}/${own[2]}`;
}

function report(profile: Profile): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const total = profile.samples.length;
  const pct = (n: number) => `${((100 * n) / total).toFixed(1).padStart(5)} %`;
  const self = new Map<string, number>();
  const perPackage = new Map<string, number>();
  for (const node of profile.nodes) {
    const key = `${node.callFrame.functionName || '(anonymous)'} ${where(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + node.hitCount);
    const pkg = node.callFrame.url === '' ? node.callFrame.functionName : where(node.callFrame.url);
    perPackage.set(pkg, (perPackage.get(pkg) ?? 0) + node.hitCount);
  }
  // Inclusive samples per function name, counting a function once per stack.
  const inclusive = new Map<string, number>();
  const walk = (id: number, stack: Set<string>) => {
    const node = byId.get(id);
    if (node === undefined) return;
    const name = `${node.callFrame.functionName || '(anonymous)'} ${where(node.callFrame.url)}`;
    const added = !stack.has(name);
    if (added) stack.add(name);
    let subtotal = node.hitCount;
    const visit = (childId: number): number => {
      const child = byId.get(childId);
      if (child === undefined) return 0;
      let sum = child.hitCount;
      for (const c of child.children ?? []) sum += visit(c);
      return sum;
    };
    for (const c of node.children ?? []) subtotal += visit(c);
    if (added) inclusive.set(name, (inclusive.get(name) ?? 0) + subtotal);
    for (const c of node.children ?? []) walk(c, stack);
    if (added) stack.delete(name);
  };
  walk(profile.nodes[0]!.id, new Set());
  const top = (map: Map<string, number>, n: number) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(`\n${total} samples. Self time by package / area:`);
  for (const [name, hits] of top(perPackage, 22)) console.log(`  ${pct(hits)}  ${name}`);
  console.log('\nSelf time by function:');
  for (const [name, hits] of top(self, 30)) console.log(`  ${pct(hits)}  ${name}`);
  console.log('\nInclusive time (own code and the libraries it calls):');
  for (const [name, hits] of top(inclusive, 60)) {
    if (/^\((root|program|idle|garbage collector)\)/.test(name)) continue;
    console.log(`  ${pct(hits)}  ${name}`);
  }
}

async function main(): Promise<void> {
  const large = scenario === 'posts-large';
  const data = await seedBenchDatabase(join(dir, 'bench.db'), large ? { posts: 100_000, tokens: 100_000 } : { posts: 1_000, tokens: 100 });
  const requests: Record<string, Request[]> = {
    user: [{ path: '/api/user', headers: { authorization: `Bearer ${data.token}`, accept: 'application/json' } }],
    posts: [{ path: '/api/posts', headers: { accept: 'application/json' } }],
    'posts-large': [{ path: '/api/posts', headers: { accept: 'application/json' } }],
    login: [
      {
        method: 'POST',
        path: '/api/tokens',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: BENCH_EMAIL, password: BENCH_PASSWORD, device_name: 'bench' }),
      },
    ],
  };
  const page = PAGES.find((candidate) => candidate.path === scenario);
  if (requests[scenario] === undefined && page === undefined) throw new Error(`unknown scenario ${scenario}; one of ${[...Object.keys(requests), ...PAGES.map((p) => p.path)].join(', ')}`);
  const postgres = process.env.BENCH_DATABASE_URL;
  if (postgres !== undefined && postgres !== '') await copyToPostgres(join(dir, 'bench.db'), postgres);
  const child = fork(new URL('./server.ts', import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { PATH: process.env.PATH ?? '', ...serviceEnv(postgres || join(dir, 'bench.db'), dir), LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
  });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const origin = `http://127.0.0.1:${port}`;
  let chosen = requests[scenario] ?? [];
  if (page !== undefined) {
    const cookies: Cookies = {
      anonymous: '',
      user: page.visitor === 'user' ? await signIn(origin, '/login', BENCH_EMAIL, BENCH_PASSWORD) : '',
      admin: page.visitor === 'admin' ? await signIn(origin, '/admin/login', BENCH_ADMIN_EMAIL, BENCH_PASSWORD) : '',
    };
    chosen = [pageRequest(page, cookies)];
  }
  await load({ origin, requests: chosen, seconds: 2, connections: 10 });
  const reply = (type: ServerMessage['type']) =>
    new Promise<ServerMessage>((resolve) => {
      const listener = (message: ServerMessage) => {
        if (message.type !== type) return;
        child.off('message', listener);
        resolve(message);
      };
      child.on('message', listener);
    });
  const profiling = reply('profiling');
  child.send({ type: 'profile-start' } satisfies ParentMessage);
  await profiling;
  const result = await load({ origin, requests: chosen, seconds, connections: 10 });
  const profiled = reply('profile');
  child.send({ type: 'profile-stop' } satisfies ParentMessage);
  const message = await profiled;
  console.log(`${scenario}: ${Math.round(result.rps)} req/s, p50 ${result.p50ms.toFixed(2)} ms, p99 ${result.p99ms.toFixed(2)} ms, non-2xx ${result.non2xx}`);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  if (message.type !== 'profile') throw new Error('no profile received');
  if (postgres !== undefined && postgres !== '') await dropPostgres(postgres);
  report(message.profile as Profile);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));
