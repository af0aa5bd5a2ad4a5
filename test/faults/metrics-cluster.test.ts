// GET /metrics with WEB_CONCURRENCY=2 (src/cluster.ts, docs/metrics.md), as a real server process
// on the test database: whichever worker a scrape reaches, it holds every worker's series, each
// labelled with its worker's id, and the primary's own (workers running, restarts). A worker
// killed with SIGKILL is replaced, the restart is counted, and the next scrapes hold the new
// worker's series instead of the dead one's.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { onPostgres } from '../helpers.js';
import { createSharedDatabase, startServerProcess, type ServerProcess, type SharedDatabase } from '../load/server-process.js';
import { parseMetrics, series, valueOf, type Families } from '../support/metrics.js';

const TOKEN = `cluster-metrics-${'fedcba9876543210'.repeat(2)}`;
const DB = onPostgres ? 'PostgreSQL' : 'SQLite file';

/** The child processes of `pid`, from /proc (Linux): the workers of the primary. */
function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
}

/**
 * One GET on a new connection: the primary hands each to the next worker in turn, and no
 * kept-alive connection to a worker killed meanwhile is reused.
 */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error('no answer')));
    req.end();
  });
}

/** The workers whose series a scrape holds, by the `worker` label of their process metrics. */
const workersIn = (families: Families) => series(families, 'process_resident_memory_bytes').map((sample) => sample.labels?.worker ?? '(none)').sort();

describe(`GET /metrics with WEB_CONCURRENCY=2 (${DB})`, () => {
  let database: SharedDatabase;
  let server: ServerProcess;

  const scrape = async (): Promise<Families> => {
    const response = await get(server.port, '/metrics', { authorization: `Bearer ${TOKEN}` });
    assert.equal(response.status, 200, response.body);
    return parseMetrics(response.body);
  };
  /** Scrapes until `check` passes; the bound only keeps a broken run from hanging. */
  const scrapeUntil = async (what: string, check: (families: Families) => boolean): Promise<Families> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      // A connection handed to a worker at the instant it is killed fails (src/cluster.ts): try again.
      const families = await scrape().catch(() => null);
      if (families !== null && check(families)) return families;
      if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}: workers ${families === null ? '(no answer)' : workersIn(families).join(', ')}`);
      await sleep(100);
    }
  };

  before(async () => {
    database = await createSharedDatabase();
    server = await startServerProcess({ DATABASE_URL: database.url, DATA_DIR: database.dataDir, WEB_CONCURRENCY: '2', RATE_LIMIT_STORE: 'database', METRICS_TOKEN: TOKEN });
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('holds both workers in one scrape, each labelled, with every request each answered', async () => {
    const before = await scrapeUntil('both workers in a scrape', (families) => valueOf(families, 'tessera_metrics_workers_scraped') === 2);
    const workers = workersIn(before);
    assert.equal(workers.length, 2, `two workers: ${workers.join(', ')}`);
    assert.equal(valueOf(before, 'tessera_workers'), 2);
    assert.equal(valueOf(before, 'tessera_worker_restarts_total'), 0);

    for (let i = 0; i < 20; i += 1) assert.equal((await get(server.port, '/up')).status, 200);
    const now = await scrape();
    const up = (families: Families, worker: string) => valueOf(families, 'tessera_http_requests_total', { method: 'GET', route: '/up', status: '200', worker });
    const rose = workers.map((worker) => up(now, worker) - up(before, worker));
    assert.equal(rose[0]! + rose[1]!, 20, `per worker: ${rose.join(', ')}`);
    assert.ok(rose.every((count) => count > 0), `both workers answered some: ${rose.join(', ')}`);
  });

  it('counts a worker killed with SIGKILL as a restart, and then scrapes its replacement', async () => {
    const before = await scrape();
    const [victim] = childrenOf(server.child.pid!);
    assert.ok(victim !== undefined, 'the primary has workers');
    process.kill(victim, 'SIGKILL');
    const now = await scrapeUntil(
      'the restart counted and the new worker scraped',
      (families) => valueOf(families, 'tessera_worker_restarts_total') === 1 && valueOf(families, 'tessera_metrics_workers_scraped') === 2,
    );
    const workers = workersIn(now);
    assert.equal(workers.length, 2);
    assert.equal(workers.filter((worker) => workersIn(before).includes(worker)).length, 1, `one worker is new: ${workersIn(before).join(', ')} → ${workers.join(', ')}`);
    assert.equal(valueOf(now, 'tessera_workers'), 2);
  });
});
