// Load generation on loopback: wrk (Debian's package) when installed, autocannon otherwise.
// wrk is preferred because it is written in C: a load generator that saturates a core of its
// own would make the bare server look slower and every ratio look better than it is.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';

export type Request = { method?: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string };

export type LoadOptions = {
  origin: string;
  /** One request, or several sent in turn. */
  requests: Request[];
  seconds: number;
  connections: number;
  /**
   * Requests each connection sends before it waits for their answers (HTTP/1.1 pipelining;
   * default 1). More than one lowers the load generator's own cost a request (one write for
   * several), which matters where it shares the cores with the processes it measures.
   */
  pipeline?: number;
};

export type LoadResult = { rps: number; p50ms: number; p99ms: number; requests: number; errors: number; non2xx: number };

const WRK = '/usr/bin/wrk';
export const loadTool = existsSync(WRK) ? 'wrk' : 'autocannon';

const run = promisify(execFile);

const lua = (value: string) => JSON.stringify(value);

/** Writes the Lua script for these requests into a new directory and returns the directory. */
function wrkScript(origin: string, requests: Request[], pipeline: number): string {
  const lines = [
    'local requests = {}',
    ...requests.map((r, i) => {
      // Headers given to wrk.format replace wrk's own, Host included (HTTP/1.1 requires it).
      const all = { host: new URL(origin).host, ...r.headers };
      const headers = `{${Object.entries(all).map(([k, v]) => `[${lua(k)}] = ${lua(v)}`).join(', ')}}`;
      return `requests[${i + 1}] = wrk.format(${lua(r.method ?? 'GET')}, ${lua(r.path)}, ${headers}, ${r.body === undefined ? 'nil' : lua(r.body)})`;
    }),
    'local i = 0',
    'request = function()',
    '  local batch = {}',
    `  for n = 1, ${pipeline} do`,
    '    i = i % #requests + 1',
    '    batch[n] = requests[i]',
    '  end',
    '  return table.concat(batch)',
    'end',
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format("\\nBENCH_JSON {\\"requests\\":%d,\\"duration_us\\":%d,\\"errors\\":%d,\\"non2xx\\":%d,\\"p50_us\\":%d,\\"p99_us\\":%d}\\n",',
    '    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99)))',
    'end',
  ];
  const dir = mkdtempSync(join(tmpdir(), 'tessera-bench-wrk-'));
  writeFileSync(join(dir, 'scenario.lua'), lines.join('\n'));
  return dir;
}

async function withWrk(options: LoadOptions): Promise<LoadResult> {
  const dir = wrkScript(options.origin, options.requests, options.pipeline ?? 1);
  let stdout: string;
  try {
    ({ stdout } = await run(WRK, ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '10s', '-s', join(dir, 'scenario.lua'), options.origin], {
      timeout: (options.seconds + 30) * 1000,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (line === undefined) throw new Error(`wrk gave no result:\n${stdout}`);
  const r = JSON.parse(line.slice('BENCH_JSON '.length)) as { requests: number; duration_us: number; errors: number; non2xx: number; p50_us: number; p99_us: number };
  return { rps: r.requests / (r.duration_us / 1e6), p50ms: r.p50_us / 1000, p99ms: r.p99_us / 1000, requests: r.requests, errors: r.errors, non2xx: r.non2xx };
}

async function withAutocannon(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.origin,
    connections: options.connections,
    duration: options.seconds,
    pipelining: options.pipeline ?? 1,
    requests: options.requests.map((r) => ({ method: r.method ?? 'GET', path: r.path, headers: r.headers ?? {}, ...(r.body === undefined ? {} : { body: r.body }) })),
  });
  return {
    rps: result.requests.total / (result.duration || options.seconds),
    p50ms: result.latency.p50,
    p99ms: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** Loads `origin` for `seconds` and returns throughput and latency. */
export function load(options: LoadOptions): Promise<LoadResult> {
  return loadTool === 'wrk' ? withWrk(options) : withAutocannon(options);
}
