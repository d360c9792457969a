/**
 * One simulated model-server replica: an engine plus the router's view of it. The view is what the
 * last scrape saw (refreshed every scrape interval, so it is stale in between, as in production)
 * plus the requests dispatched since.
 */
import type { Endpoint, EndpointMetrics } from "../endpoints/endpoint.ts";
import { emptyMetrics } from "../endpoints/endpoint.ts";
import type { Engine } from "../engine/types.ts";

/** An engine and its endpoint. */
export class Replica {
  readonly endpoint: Endpoint;
  private readonly metrics: EndpointMetrics = emptyMetrics();
  /** True while a step is in flight (its end is scheduled). */
  stepping = false;
  /** Restarts so far: a step scheduled by an earlier engine is stale. */
  epoch = 0;
  /** Requests this replica's engine serves to the client (aggregated requests and decode legs). */
  readonly inFlight = new Set<string>();
  /** Engine state changed since the last scrape. */
  private dirty = true;

  constructor(
    readonly index: number,
    public engine: Engine,
    model: string,
    labels: Readonly<Record<string, string>> = {},
  ) {
    this.metrics.activeModels = [model];
    this.endpoint = {
      metadata: {
        key: `fleet/replica-${index}`,
        name: `replica-${index}`,
        namespace: "fleet",
        address: `10.0.${index >> 8}.${index & 255}`,
        port: 8000,
        labels,
      },
      metrics: this.metrics,
      attributes: new Map(),
    };
  }

  /** `address:port`, as P/D headers name the endpoint. */
  get hostPort(): string {
    return `${this.endpoint.metadata.address}:${this.endpoint.metadata.port}`;
  }

  /**
   * The replica died and came back with `engine` (empty cache, new engine identity): what ran on
   * the old one is gone; returns the requests it was serving.
   */
  restart(engine: Engine): string[] {
    const lost = [...this.inFlight];
    this.inFlight.clear();
    this.engine = engine;
    this.epoch++;
    this.stepping = false;
    this.dirty = true;
    return lost;
  }

  /** The router dispatched a request here (counted until the next scrape). */
  dispatched(): void {
    this.metrics.dispatchedSinceScrape++;
    this.dirty = true;
  }

  /** The engine ran a step or changed state. */
  touched(): void {
    this.dirty = true;
  }

  /** Refreshes the router's view from the engine at `nowMs` (skips the copy when nothing changed). */
  scrape(nowMs: number): void {
    const m = this.metrics;
    m.updatedAtMs = nowMs;
    m.dispatchedSinceScrape = 0;
    if (!this.dirty) return;
    this.dirty = false;
    const s = this.engine.stats();
    m.waitingQueueSize = s.waiting;
    m.runningRequestsSize = s.running;
    m.kvCacheUsagePercent = s.kvUsage;
    m.cacheBlockSize = s.blockSize;
    m.cacheNumBlocks = s.numGpuBlocks;
    m.waitingModels = s.waiting > 0 ? m.activeModels : [];
  }
}
