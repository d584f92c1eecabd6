import { createServer, type Server } from 'node:http';
import type { HealthProbes, ProbeResult } from './health-probes.js';

/** A Prometheus text exposition: its content type and body. */
export interface Exposition {
  readonly contentType: string;
  readonly body: string;
}

/** What a {@link MetricsServer} serves. */
export interface MetricsSource {
  /** `/metrics`: the metrics as Prometheus text (prom-client's `Registry.metrics()`). */
  exposition(): Promise<Exposition>;
  /** `/healthz` and `/readyz`; without them those paths answer 404. */
  readonly probes?: HealthProbes;
}

/**
 * The worker's HTTP endpoint on `--metrics-port`: Prometheus metrics on `/metrics`, and with
 * probes, liveness on `/healthz` and readiness on `/readyz` (JSON bodies, 200 or 503). One per
 * process, whether it runs one stream thread or several.
 */
export class MetricsServer {
  private server: Server | undefined;

  constructor(private readonly source: MetricsSource) {}

  /**
   * Listens on `port` (0 picks a free port) of `host` (an interface's address or a host name;
   * default every interface).
   *
   * @returns the address and port it listens on (`::` or `0.0.0.0`: every interface)
   * @throws the `listen` error (e.g. `EADDRINUSE`, `EADDRNOTAVAIL`) when the address cannot be had
   */
  async listen(port: number, host?: string): Promise<{ readonly address: string; readonly port: number }> {
    const { probes } = this.source;
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (probes !== undefined && (path === '/healthz' || path === '/readyz')) {
        const answer = (result: ProbeResult): void => {
          res.writeHead(result.status, { 'content-type': 'application/json' }).end(`${JSON.stringify(result.body)}\n`);
        };
        Promise.resolve(path === '/healthz' ? probes.liveness() : probes.readiness()).then(answer, (error: unknown) =>
          answer({ status: 503, body: { status: 'unhealthy', problems: [`probe failed: ${String(error)}`] } }),
        );
        return;
      }
      if (path !== '/metrics') {
        res.writeHead(404).end(`not found; try /metrics${probes ? ', /healthz or /readyz' : ''}\n`);
        return;
      }
      this.source.exposition().then(
        ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
    const bound = server.address();
    return typeof bound === 'object' && bound !== null ? { address: bound.address, port: bound.port } : { address: host ?? '::', port };
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
