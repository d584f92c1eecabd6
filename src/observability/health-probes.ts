/** A probe's answer: HTTP status 200 or 503, and its JSON body. */
export interface ProbeResult {
  readonly status: 200 | 503;
  readonly body: Readonly<Record<string, unknown>>;
}

/** `/healthz` and `/readyz`, as the worker's HTTP server calls them (a process of stream threads asks each thread, so it answers later). */
export interface HealthProbes {
  liveness(): ProbeResult | Promise<ProbeResult>;
  readiness(): ProbeResult | Promise<ProbeResult>;
}
