// The metrics behind GET /metrics (http/metrics.ts), in prom-client's registries: nothing at all
// is recorded, and there is no route, unless METRICS_TOKEN is set. What is counted and why is in
// docs/metrics.md; prom-client stays in this file, http/metrics.ts and cluster.ts (the domain
// reports through SignInService.observe, which knows no metrics library).
//
// - Requests: one onResponse hook counts each answer and times it, labelled by the route's
//   pattern (`/blog/:slug`, never the URL asked for: a path or query can hold a token or an
//   email, and every distinct URL would be a new series), its method and its status. A request
//   no route matched is labelled `(unmatched)`, as the request log names it.
// - The process (prom-client's default metrics): event-loop lag, heap, CPU, open handles, GC.
//   Collected once per process, whatever the number of apps built in it (tests build many).
// - The database pool (PostgreSQL; SQLite has no pool), the rate-limit store, sign-ins: read at
//   each scrape or counted as they happen.
// - Several workers (WEB_CONCURRENCY > 1): the worker that receives the scrape asks the primary,
//   which collects every worker's metrics (cluster.ts), so one scrape covers all, each series
//   labelled with its worker's id.
import cluster from 'node:cluster';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric, type MetricValueWithName } from 'prom-client';
import { workerMetrics } from '../cluster.js';
import { breakerFor } from '../modules/rate-limit/breaker.js';
import { fallbacksOf, limitStoreState } from '../modules/rate-limit/store-state.js';
import type { MetricsExposition } from './types.js';

/** Seconds; the service answers most requests in a few milliseconds, so the low end is finer than prom-client's default. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The route label of a request no route matched (as the request log's `path`). */
export const UNMATCHED = '(unmatched)';

type RequestLabels = { method: string; route: string; status: number };
type RequestSeries = { labels: RequestLabels; count: number; sum: number; /** per bucket, not cumulative */ buckets: number[] };

/**
 * The requests answered, by method, route pattern and status: a count, a sum of seconds and
 * a count per duration bucket each, kept in a Map by a string key (a request costs one lookup
 * and three additions). The duration histogram is read from it at scrape time in the shape
 * prom-client's own Histogram gives (so the text, and the cluster's aggregation of it, are
 * prom-client's own).
 */
class RequestTally {
  private readonly bySeries = new Map<string, RequestSeries>();

  record(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let found = this.bySeries.get(key);
    if (found === undefined) {
      found = { labels: { method, route, status }, count: 0, sum: 0, buckets: DURATION_BUCKETS.map(() => 0) };
      this.bySeries.set(key, found);
    }
    found.count += 1;
    found.sum += seconds;
    const bucket = DURATION_BUCKETS.findIndex((bound) => seconds <= bound);
    if (bucket !== -1) found.buckets[bucket]! += 1;
  }

  series(): IterableIterator<RequestSeries> {
    return this.bySeries.values();
  }

  /** The histogram `name` of these requests, as a metric a prom-client Registry serves. */
  histogram(name: string, help: string): Metric {
    const read = () => {
      const values: MetricValueWithName<string>[] = [];
      for (const { labels, count, sum, buckets } of this.bySeries.values()) {
        let cumulative = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += buckets[i]!;
          values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
        });
        values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${name}_bucket` });
        values.push({ labels, value: sum, metricName: `${name}_sum` });
        values.push({ labels, value: count, metricName: `${name}_count` });
      }
      return { name, help, type: 'histogram', values, aggregator: 'sum' };
    };
    // A Registry asks a metric only for these (registry.js: get, and reset from resetMetrics).
    // prom-client's MetricType enum exists in its types only, hence the plain 'histogram'.
    const metric = { name, help, type: 'histogram', aggregator: 'sum', get: async () => read(), reset: () => this.bySeries.clear() };
    return metric as unknown as Metric;
  }
}

let processRegistry: Registry | null = null;

/** The process's own metrics (event-loop lag, memory, CPU, GC), set up once per process. */
function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export const metricsPlugin = fp(
  async (app: FastifyInstance) => {
    if (app.config.metricsToken === null) {
      app.decorate('metrics', null);
      return;
    }
    const registry = new Registry();
    const registers = [registry];
    // Counted in plain numbers on the way out and handed to prom-client only when scraped: its
    // inc() and observe() check and hash the labels at every call, which put GET /api/user at
    // 194,000 instructions a request instead of 138,000 (callgrind, bench/instructions.ts).
    const tally = new RequestTally();
    new Counter({
      name: 'tessera_http_requests_total',
      help: 'Requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
      collect() {
        this.reset();
        for (const each of tally.series()) this.inc(each.labels, each.count);
      },
    });
    registry.registerMetric(tally.histogram('tessera_http_request_duration_seconds', 'Time from the request to its answer, by method, route pattern and status.'));
    // Callback style: an async hook costs a promise per request.
    app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
      tally.record(request.method, request.routeOptions.url ?? UNMATCHED, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });

    const signIns = new Counter({
      name: 'tessera_sign_ins_total',
      help: 'Sign-in attempts by realm (site, panel, api), method and outcome (succeeded, challenged, failed, limited).',
      labelNames: ['realm', 'method', 'outcome'] as const,
      registers,
    });
    app.services.signIn.observe((event) => signIns.inc({ realm: event.realm, method: event.method, outcome: event.outcome }));

    const pool = app.db.pool;
    if (pool !== null) {
      new Gauge({
        name: 'tessera_db_pool_connections',
        help: 'PostgreSQL connections of the pool, by state (in_use, idle).',
        labelNames: ['state'] as const,
        registers,
        collect() {
          this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
          this.set({ state: 'idle' }, pool.idleCount);
        },
      });
      new Gauge({
        name: 'tessera_db_pool_waiting',
        help: 'Queries waiting for a PostgreSQL connection of the pool, when scraped.',
        registers,
        collect() {
          this.set(pool.waitingCount);
        },
      });
      new Gauge({ name: 'tessera_db_pool_max', help: 'The pool size: connections it may open.', registers }).set(pool.options.max);
    }

    const { rateLimitStore } = app.config;
    new Gauge({
      name: 'tessera_rate_limit_store_up',
      help: 'Whether the store RATE_LIMIT_STORE names answers (1) or not (0), asked at each scrape as GET /up asks it.',
      labelNames: ['store'] as const,
      registers,
      async collect() {
        const state = await limitStoreState(rateLimitStore, { redis: app.services.redis, db: app.db });
        this.set({ store: state.kind }, state.ok ? 1 : 0);
      },
    });
    // Redis's circuit breaker (modules/rate-limit/breaker.ts): whether it skips Redis now. The
    // database store has no breaker: its failures show in tessera_rate_limit_store_up and in the
    // fallbacks below.
    const redis = app.services.redis;
    if (redis !== null) {
      const breaker = breakerFor(redis);
      const states = ['closed', 'open', 'half-open'] as const;
      new Gauge({
        name: 'tessera_rate_limit_breaker_state',
        help: 'The Redis circuit breaker: 1 for its state now (closed: Redis is used; open: skipped; half-open: a probe is out), 0 for the others.',
        labelNames: ['state'] as const,
        registers,
        collect() {
          for (const state of states) this.set({ state }, breaker.state === state ? 1 : 0);
        },
      });
    }

    // Calls the limits answered without their shared store (the request limit let a request
    // through, a throttle counted in this process), for Redis and the database alike; with Redis
    // they include those the open breaker skipped.
    if (rateLimitStore !== 'memory') {
      const fallbacks = fallbacksOf(rateLimitStore === 'redis' && redis !== null ? redis : app.db);
      new Counter({
        name: 'tessera_rate_limit_store_fallbacks_total',
        help: 'Rate-limit and throttle calls answered without the shared store (it failed, or the Redis breaker skipped it).',
        registers,
        collect() {
          this.reset();
          this.inc(fallbacks.count);
        },
      });
    }

    const local = async () => Registry.merge([processMetrics(), registry]).metrics();
    const workers = cluster.isWorker && app.config.webConcurrency > 1 ? workerMetrics(async () => [...(await processMetrics().getMetricsAsJSON()), ...(await registry.getMetricsAsJSON())]) : null;
    if (workers !== null) {
      // Each worker's series apart, by worker id: a sum over the workers would drop when one dies
      // and look like a counter reset to Prometheus, whose rate() would then count the survivors'
      // whole totals again, a false spike at the very moment worth watching (docs/metrics.md).
      const labels = { worker: String(workers.id) };
      registry.setDefaultLabels(labels);
      processMetrics().setDefaultLabels(labels);
      app.addHook('onClose', async () => workers.close());
    }
    const exposition: MetricsExposition = { contentType: registry.contentType, scrape: workers?.scrape ?? local };
    app.decorate('metrics', exposition);
  },
  { name: 'metrics' },
);
