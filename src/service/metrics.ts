/**
 * Prometheus metrics of the service in the text exposition format (version 0.0.4): requests by
 * route and status, a latency histogram by route, errors by kind, and the assemblies made. Routes
 * are the fixed route names (unknown paths count as `other`), so label sets stay bounded.
 */

/** Upper bounds of the latency buckets, in seconds. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

export class Metrics {
  private readonly requests = new Map<string, number>();
  private readonly latency = new Map<string, Histogram>();
  private readonly errors = new Map<string, number>();
  private assemblies = 0;
  private cacheHits = 0;
  private readonly started = Date.now();
  /** The worker pool's state at the time of a scrape (the server sets it). */
  gauges?: () => { workers: number; busy: number; queued: number; replaced: number };
  /** Open connections, those without a request under way, and those closed at the caps. */
  connections?: () => { open: number; idle: number; evicted: number; refused: number };
  /** The shared context store's state (only with one). */
  store?: () => { up: boolean; failures: number };

  observe(route: string, status: number, seconds: number): void {
    const key = `${route}\u0000${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    let h = this.latency.get(route);
    if (!h) {
      h = { counts: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.latency.set(route, h);
    }
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) if (seconds <= LATENCY_BUCKETS[i]) h.counts[i]++;
    h.sum += seconds;
    h.count++;
  }

  error(kind: string): void {
    this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1);
  }

  assembled(): void {
    this.assemblies++;
  }

  cacheHit(): void {
    this.cacheHits++;
  }

  /** The exposition text. */
  render(): string {
    const lines: string[] = [];
    lines.push('# HELP ctxlens_http_requests_total HTTP requests by route and status code.', '# TYPE ctxlens_http_requests_total counter');
    for (const [key, n] of [...this.requests.entries()].sort()) {
      const [route, status] = key.split('\u0000');
      lines.push(`ctxlens_http_requests_total{route="${esc(route)}",status="${status}"} ${n}`);
    }
    lines.push('# HELP ctxlens_http_request_duration_seconds Time from the request to the end of the response.', '# TYPE ctxlens_http_request_duration_seconds histogram');
    for (const [route, h] of [...this.latency.entries()].sort()) {
      const r = esc(route);
      LATENCY_BUCKETS.forEach((le, i) => lines.push(`ctxlens_http_request_duration_seconds_bucket{route="${r}",le="${le}"} ${h.counts[i]}`));
      lines.push(`ctxlens_http_request_duration_seconds_bucket{route="${r}",le="+Inf"} ${h.count}`);
      lines.push(`ctxlens_http_request_duration_seconds_sum{route="${r}"} ${h.sum.toFixed(6)}`);
      lines.push(`ctxlens_http_request_duration_seconds_count{route="${r}"} ${h.count}`);
    }
    lines.push('# HELP ctxlens_http_errors_total Requests answered with an error, by kind.', '# TYPE ctxlens_http_errors_total counter');
    for (const [kind, n] of [...this.errors.entries()].sort()) lines.push(`ctxlens_http_errors_total{kind="${esc(kind)}"} ${n}`);
    lines.push('# HELP ctxlens_assemblies_total Requests assembled.', '# TYPE ctxlens_assemblies_total counter', `ctxlens_assemblies_total ${this.assemblies}`);
    lines.push('# HELP ctxlens_response_cache_hits_total Requests answered from the response cache (byte-identical request, unchanged template files).', '# TYPE ctxlens_response_cache_hits_total counter', `ctxlens_response_cache_hits_total ${this.cacheHits}`);
    const g = this.gauges?.();
    if (g) {
      lines.push('# HELP ctxlens_workers Worker threads that parse and assemble requests.', '# TYPE ctxlens_workers gauge', `ctxlens_workers ${g.workers}`);
      lines.push('# HELP ctxlens_workers_busy Worker threads working on a request.', '# TYPE ctxlens_workers_busy gauge', `ctxlens_workers_busy ${g.busy}`);
      lines.push('# HELP ctxlens_queue_depth Requests waiting for a worker.', '# TYPE ctxlens_queue_depth gauge', `ctxlens_queue_depth ${g.queued}`);
      lines.push('# HELP ctxlens_workers_replaced_total Workers replaced after a crash, the heap limit or the work limit.', '# TYPE ctxlens_workers_replaced_total counter', `ctxlens_workers_replaced_total ${g.replaced}`);
    }
    const c = this.connections?.();
    if (c) {
      lines.push('# HELP ctxlens_connections Open connections.', '# TYPE ctxlens_connections gauge', `ctxlens_connections ${c.open}`);
      lines.push('# HELP ctxlens_connections_idle Open connections without a request under way.', '# TYPE ctxlens_connections_idle gauge', `ctxlens_connections_idle ${c.idle}`);
      lines.push('# HELP ctxlens_connections_closed_total Connections closed at the connection caps: the idle one closed for a new client (evicted), or the new one (refused).', '# TYPE ctxlens_connections_closed_total counter', `ctxlens_connections_closed_total{reason="evicted"} ${c.evicted}`, `ctxlens_connections_closed_total{reason="refused"} ${c.refused}`);
    }
    const st = this.store?.();
    if (st) {
      lines.push('# HELP ctxlens_store_up Whether the shared context store answers (1) or lookups by context_id are answered 503 (0).', '# TYPE ctxlens_store_up gauge', `ctxlens_store_up ${st.up ? 1 : 0}`);
      lines.push('# HELP ctxlens_store_failures_total Failed commands and connections of the shared context store.', '# TYPE ctxlens_store_failures_total counter', `ctxlens_store_failures_total ${st.failures}`);
    }
    lines.push('# HELP ctxlens_uptime_seconds Seconds since the service started.', '# TYPE ctxlens_uptime_seconds gauge', `ctxlens_uptime_seconds ${((Date.now() - this.started) / 1000).toFixed(3)}`);
    return lines.join('\n') + '\n';
  }
}
