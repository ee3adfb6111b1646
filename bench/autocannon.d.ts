// The part of autocannon's API the benchmarks use (it ships no types).
declare module 'autocannon' {
  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?(request: Record<string, unknown>, context: Record<string, unknown>): Record<string, unknown>;
    onResponse?(status: number, body: string, context: Record<string, unknown>): void;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    method?: string;
    body?: string;
    headers?: Record<string, string>;
    requests?: Request[];
    /** Return this run's raw result (histograms encoded), to be merged by aggregateResult. */
    skipAggregateResult?: boolean;
  }
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p99: number;
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }
  function autocannon(options: Options): Promise<Result>;
  namespace autocannon {
    /** Merges raw results of runs started with skipAggregateResult (latency histograms are merged exactly). */
    function aggregateResult(results: unknown[], options: Options): Result;
  }
  export default autocannon;
}
