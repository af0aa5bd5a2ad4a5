// Several worker processes on one port (WEB_CONCURRENCY > 1), with node:cluster. The primary is
// the process server.ts starts: it has checked the database and run the migrations before forking
// (src/startup-errors.ts; so workers never race on them) and never opens the database for requests. It owns the listening socket and hands each
// new connection to a worker in turn (node:cluster's round robin); each worker is the whole server
// of server.ts, with its own app, database connections and caches.
//
// The primary replaces a worker that dies, logging it as one JSON line (pino's format, as the
// workers log); on SIGTERM or SIGINT it sends SIGTERM to every worker, whose own graceful shutdown
// stops accepting, answers the requests in flight and closes; then it exits, 0 when every worker
// stopped cleanly. A worker whose primary disappears (killed, crashed) drains the same way rather
// than node:cluster's immediate exit.
//
// A connection the primary is handing to a worker at the instant that worker is killed stays
// unanswered until its client gives up: node:cluster keeps its copy of the connection until the
// worker acknowledges it, and forgets it when the worker dies (the tests see one such connection
// per kill under load). Nothing outside node:cluster can reach it.
//
// Metrics (METRICS_TOKEN, docs/metrics.md): a scrape reaches one worker, which asks the primary
// (SCRAPE); the primary asks every worker that has listened for its metrics (COLLECT), puts them
// together with prom-client's AggregatorRegistry.aggregate (each worker's series carry its
// `worker` label, so none is summed with another's), adds its own (worker restarts) and answers
// the text. A worker that does not answer within COLLECT_TIMEOUT_MS is left out of that scrape,
// and tessera_metrics_workers_scraped says how many were in it.
import cluster, { type Worker } from 'node:cluster';
import { pino, type Logger } from 'pino';
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import type { Config } from './config.js';

/**
 * A worker that dies before it listens, or sooner than this after it began listening, died "right
 * after start". Measured from listening, not from the fork: a worker's start (loading the modules,
 * opening the database) takes 1–2 s on a quiet machine but over 10 s on a slow, busy one, and
 * counted from the fork a worker that failed while starting there would never count, and the loop
 * would go on forever.
 */
const EARLY_DEATH_MS = 10_000;
/**
 * A crash loop: this many workers died right after start within CRASH_WINDOW_MS. Replacing them
 * again would only repeat the failure (a broken release, a database that refuses every new
 * connection) while the log fills, so the primary stops the others and exits 1 for the process
 * supervisor (systemd, the orchestrator) to see and handle; a worker dying now and then, or after
 * having served a while, is always replaced.
 */
const MAX_EARLY_DEATHS = 5;
const CRASH_WINDOW_MS = 60_000;
/** A worker still running this long after SIGTERM is killed (its own shutdown gives up after 10 s). */
const DRAIN_LIMIT_MS = 15_000;

/** The messages of a scrape: worker → primary SCRAPE, primary → workers COLLECT, and their answers. */
const SCRAPE = 'tessera:metrics:scrape';
const SCRAPED = 'tessera:metrics:scraped';
const COLLECT = 'tessera:metrics:collect';
const COLLECTED = 'tessera:metrics:collected';
/** How long the primary waits for one worker's metrics, and a worker for the primary's answer. */
const COLLECT_TIMEOUT_MS = 2_000;
const SCRAPE_TIMEOUT_MS = COLLECT_TIMEOUT_MS + 3_000;

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;
type MetricsMessage = { type?: unknown; id?: unknown; metrics?: MetricsJson; text?: string | null };

/** The primary's side of the metrics: its own counters, and the collection of every worker's. */
function primaryMetrics(workers: () => Iterable<Worker>, running: () => number) {
  const registry = new Registry();
  const registers = [registry];
  const restarts = new Counter({ name: 'tessera_worker_restarts_total', help: 'Workers that died and were replaced by the primary.', registers });
  new Gauge({ name: 'tessera_workers', help: 'Worker processes running (WEB_CONCURRENCY).', registers, collect() {
    this.set(running());
  } });
  const scraped = new Gauge({ name: 'tessera_metrics_workers_scraped', help: 'Workers whose metrics this scrape holds (a worker not answering in time is left out).', registers });
  let next = 0;

  const collectFrom = (worker: Worker, id: number): Promise<MetricsJson | null> =>
    new Promise((resolve) => {
      const finish = (metrics: MetricsJson | null) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        resolve(metrics);
      };
      const onMessage = (message: MetricsMessage) => {
        if (message?.type === COLLECTED && message.id === id && Array.isArray(message.metrics)) finish(message.metrics);
      };
      const onExit = () => finish(null);
      const timer = setTimeout(() => finish(null), COLLECT_TIMEOUT_MS);
      worker.on('message', onMessage);
      worker.once('exit', onExit);
      worker.send({ type: COLLECT, id }, (error: Error | null) => {
        if (error) finish(null);
      });
    });

  const scrape = async (): Promise<string> => {
    next += 1;
    const answers = (await Promise.all([...workers()].map((worker) => collectFrom(worker, next)))).filter((metrics) => metrics !== null);
    scraped.set(answers.length);
    return AggregatorRegistry.aggregate([...answers, await registry.getMetricsAsJSON()]).metrics();
  };

  // A worker asks for the whole cluster's metrics on behalf of its scraper.
  cluster.on('message', (worker, message: MetricsMessage) => {
    if (message?.type !== SCRAPE) return;
    const answer = (text: string | null) => {
      if (worker.isConnected()) worker.send({ type: SCRAPED, id: message.id, text }, () => undefined);
    };
    scrape().then(answer, () => answer(null));
  });
  return { restarted: () => restarts.inc() };
}

/** Forks `config.webConcurrency` workers of this same script and supervises them until a signal. */
export function runPrimary(config: Config): void {
  // Written at once (few lines), so that they keep their order and none is lost at process.exit.
  const log: Logger = pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: true }));
  const started = new Set<Worker>();
  // The workers that have listened, and when: the others cannot answer a metrics collection yet.
  const listening = new Map<Worker, number>();
  const metrics = config.metricsToken === null ? null : primaryMetrics(() => listening.keys(), () => started.size);
  const earlyDeaths: number[] = [];
  let served = false;
  let stopping = false;
  let exitCode = 0;

  const describe = (worker: Worker, code?: number | null, signal?: string | null) => ({
    worker: { id: worker.id, pid: worker.process.pid, ...(code === undefined ? {} : { code, signal }) },
  });
  const fork = () => {
    const worker = cluster.fork();
    started.add(worker);
    // A message to a worker that has just died fails (EPIPE): its exit, handled below, follows.
    // Unheard, the error would end the primary and with it the service.
    worker.on('error', (error: Error) => log.warn({ ...describe(worker), err: error }, 'worker channel error'));
  };

  const stop = (code: number) => {
    exitCode = Math.max(exitCode, code);
    if (stopping) return;
    stopping = true;
    for (const worker of started) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const worker of started) worker.process.kill('SIGKILL');
    }, DRAIN_LIMIT_MS).unref();
    if (started.size === 0) process.exit(exitCode);
  };

  cluster.on('listening', (worker) => {
    served = true;
    listening.set(worker, Date.now());
    log.info(describe(worker), 'worker listening');
  });

  cluster.on('exit', (worker, code, signal) => {
    const listenedAt = listening.get(worker);
    const servedFor = listenedAt === undefined ? 0 : Date.now() - listenedAt;
    started.delete(worker);
    listening.delete(worker);
    if (stopping) {
      // Ended by the SIGTERM sent here before it had set up its own handler: it had nothing to drain.
      const clean = code === 0 || signal === 'SIGTERM';
      if (!clean) exitCode = 1;
      log[clean ? 'info' : 'error'](describe(worker, code, signal), 'worker stopped');
      if (started.size === 0) {
        log.info({ exitCode }, 'all workers stopped');
        process.exit(exitCode);
      }
      return;
    }
    if (!served) {
      // No worker has listened yet: the start itself fails (port taken, database unreachable…);
      // the worker has said why, and every replacement would fail the same way.
      log.fatal(describe(worker, code, signal), 'a worker failed to start (its error is above): stopping');
      stop(1);
      return;
    }
    if (servedFor < EARLY_DEATH_MS) {
      const now = Date.now();
      earlyDeaths.push(now);
      while (earlyDeaths[0] !== undefined && earlyDeaths[0] < now - CRASH_WINDOW_MS) earlyDeaths.shift();
      if (earlyDeaths.length >= MAX_EARLY_DEATHS) {
        log.fatal(
          describe(worker, code, signal),
          `workers keep dying right after start (${earlyDeaths.length} within ${CRASH_WINDOW_MS / 1000} s, each before or less than ${EARLY_DEATH_MS / 1000} s after it listened): stopping`,
        );
        stop(1);
        return;
      }
    }
    log.error(describe(worker, code, signal), 'worker died; starting another');
    metrics?.restarted();
    fork();
  });

  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) log.info({ signal, workers: started.size }, 'shutting down');
    stop(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  log.info({ workers: config.webConcurrency }, 'starting workers');
  for (let i = 0; i < config.webConcurrency; i += 1) fork();
}

/**
 * In a worker: when the primary goes away (killed, crashed, or disconnecting it), `shutdown` drains
 * the worker as SIGTERM does. node:cluster's own listener would exit at once, dropping the requests
 * in flight, unless the disconnect was asked for; marking it so leaves the exit to `shutdown`.
 */
export function drainWhenPrimaryGone(shutdown: (reason: string) => void): void {
  const worker = cluster.worker;
  if (worker === undefined) return;
  process.prependOnceListener('disconnect', () => {
    worker.exitedAfterDisconnect = true;
    shutdown('primary disconnected');
  });
}

/**
 * In a worker with metrics on: answers the primary's collections with `own` (this worker's
 * metrics), and gives `scrape`, the whole cluster's text through the primary. Null outside a worker.
 */
export function workerMetrics(own: () => Promise<MetricsJson>): { id: number; scrape(): Promise<string>; close(): void } | null {
  const send = process.send?.bind(process);
  if (cluster.worker === undefined || send === undefined) return null;
  const waiting = new Map<number, (text: string | null) => void>();
  let next = 0;
  const onMessage = (message: MetricsMessage) => {
    if (message?.type === COLLECT) {
      own().then(
        (metrics) => send({ type: COLLECTED, id: message.id, metrics }, undefined, {}, () => undefined),
        () => undefined,
      );
    } else if (message?.type === SCRAPED && typeof message.id === 'number') {
      waiting.get(message.id)?.(typeof message.text === 'string' ? message.text : null);
    }
  };
  process.on('message', onMessage);
  return {
    id: cluster.worker.id,
    scrape: () =>
      new Promise((resolve, reject) => {
        next += 1;
        const id = next;
        const finish = (text: string | null) => {
          clearTimeout(timer);
          waiting.delete(id);
          if (text === null) reject(new Error('the primary gave no metrics'));
          else resolve(text);
        };
        const timer = setTimeout(() => finish(null), SCRAPE_TIMEOUT_MS);
        waiting.set(id, finish);
        send({ type: SCRAPE, id }, undefined, {}, (error: Error | null) => {
          if (error) finish(null);
        });
      }),
    close: () => {
      process.off('message', onMessage);
      for (const finish of waiting.values()) finish(null);
    },
  };
}
