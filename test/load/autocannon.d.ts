// The part of autocannon's API the load and fault suites use (the package ships no types, and
// one declaration is lighter than another dependency).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    type Request = {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | null | undefined;
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
    };

    type Options = {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      timeout?: number;
      pipelining?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: Request[];
      initialContext?: Record<string, unknown>;
      setupClient?: (client: unknown) => void;
    };

    type Histogram = { average: number; mean: number; min: number; max: number; total: number; p50: number; p99: number };

    type Result = {
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      statusCodeStats: Record<string, { count: number }>;
    };

    type Instance = EventEmitter & { stop(): void };
  }

  function autocannon(options: autocannon.Options): Promise<autocannon.Result> & autocannon.Instance;
  export default autocannon;
}
