// What one page costs besides the service's own instructions (which bench/instructions.ts
// counts): the service's CPU a request in user and system time and its context switches (from
// /proc), and on PostgreSQL the CPU of its backends a request and the transactions a request
// (each look at the change counters is one). Runs the service (bench/server.ts) on the bench's
// data (a SQLite file, or a copy in BENCH_DATABASE_URL), loads one page with `connections`
// connections for `seconds`, and prints the figures.
//   [BENCH_DATABASE_URL=postgres://…/name] npx tsx bench/looks.ts / [seconds] [connections]
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { load } from './load.js';
import { PAGES, pageRequest, signIn, type Cookies } from './pages.js';
import { BENCH_ADMIN_EMAIL, BENCH_EMAIL, BENCH_PASSWORD, copyToPostgres, dropPostgres, seedBenchDatabase, serviceEnv } from './seed.js';

const path = process.argv[2] ?? '/';
const seconds = Number(process.argv[3] ?? 5);
const connections = Number(process.argv[4] ?? 10);
const postgres = process.env.BENCH_DATABASE_URL || undefined;
const page = PAGES.find((candidate) => candidate.path === path);
if (page === undefined) throw new Error(`unknown page ${path}; one of ${PAGES.map((p) => p.path).join(', ')}`);
const dir = mkdtempSync(join(tmpdir(), 'tessera-looks-'));
const database = postgres === undefined ? '' : new URL(postgres).pathname.slice(1);

/** CPU seconds (user + system) of a process so far. */
function cpu(pid: number): number {
  const { user, system } = times(pid);
  return user + system;
}

/** CPU seconds in user and in system time of a process so far (and of its main thread), and its context switches. */
function times(pid: number): { user: number; system: number; main: number; switches: number } {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    const thread = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const switches = [...status.matchAll(/ctxt_switches:\s+(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100, main: (Number(thread[11]) + Number(thread[12])) / 100, switches };
  } catch {
    return { user: 0, system: 0, main: 0, switches: 0 };
  }
}

async function main(): Promise<void> {
  await seedBenchDatabase(join(dir, 'bench.db'), { posts: 1_000, tokens: 200 });
  if (postgres !== undefined) await copyToPostgres(join(dir, 'bench.db'), postgres);
  const child = fork(new URL('./server.ts', import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { PATH: process.env.PATH ?? '', ...serviceEnv(postgres ?? join(dir, 'bench.db'), dir) },
  });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const origin = `http://127.0.0.1:${port}`;
  const cookies: Cookies = {
    anonymous: '',
    user: page!.visitor === 'user' ? await signIn(origin, '/login', BENCH_EMAIL, BENCH_PASSWORD) : '',
    admin: page!.visitor === 'admin' ? await signIn(origin, '/admin/login', BENCH_ADMIN_EMAIL, BENCH_PASSWORD) : '',
  };
  const requests = [pageRequest(page!, cookies)];
  await load({ origin, requests, seconds: 3, connections });
  const admin = postgres === undefined ? null : new pg.Client({ connectionString: postgres });
  await admin?.connect();
  const pids =
    admin === null
      ? []
      : (await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database])).rows.map((row) => row.pid);
  const transactions = async () => {
    if (admin === null) return 0;
    await sleep(1_500); // PostgreSQL 15 flushes its statistics at most once a second
    return Number((await admin.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = $1', [database])).rows[0]?.n);
  };
  const reading = async () => ({ transactions: await transactions(), service: times(child.pid!), backends: pids.reduce((sum, pid) => sum + cpu(pid), 0) });
  const before = await reading();
  const result = await load({ origin, requests, seconds, connections });
  const after = await reading();
  const n = result.requests;
  const each = (seconds: number) => `${((1e6 * seconds) / n).toFixed(1)} µs`;
  console.log(`${path} on ${postgres === undefined ? 'SQLite' : 'PostgreSQL'}, ${connections} connections, ${seconds} s: ${Math.round(result.rps)} req/s, non-2xx ${result.non2xx}`);
  console.log(`  service CPU a request   ${each(after.service.user - before.service.user)} user, ${each(after.service.system - before.service.system)} system (main thread ${each(after.service.main - before.service.main)})`);
  console.log(`  context switches a request ${((after.service.switches - before.service.switches) / n).toFixed(2)}`);
  if (admin !== null) {
    // The sleep and the statistics query between the two readings are the admin connection's own transactions.
    const own = 2;
    console.log(`  backends' CPU a request ${each(after.backends - before.backends)} (${pids.length} backends)`);
    console.log(`  transactions a request  ${((after.transactions - before.transactions - own) / n).toFixed(3)}`);
    await admin.end();
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  if (postgres !== undefined) await dropPostgres(postgres);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));
