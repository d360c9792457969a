/**
 * The router's own count of requests dispatched to each endpoint and not yet completed. Compared
 * with what the servers report (running + waiting) it yields `llmd_inflight_drift`: a leak in the
 * gateway's accounting shows up as drift that never returns to zero.
 */
export class InflightTracker {
  private readonly byEndpoint = new Map<string, number>();
  private count = 0;

  /** A request was dispatched to `endpointKey`. */
  add(endpointKey: string): void {
    this.byEndpoint.set(endpointKey, (this.byEndpoint.get(endpointKey) ?? 0) + 1);
    this.count++;
  }

  /** The request on `endpointKey` ended (call exactly once per `add`). */
  remove(endpointKey: string): void {
    const n = (this.byEndpoint.get(endpointKey) ?? 0) - 1;
    if (n > 0) this.byEndpoint.set(endpointKey, n);
    else this.byEndpoint.delete(endpointKey);
    this.count--;
  }

  /** In-flight requests on one endpoint (0 when none). */
  of(endpointKey: string): number {
    return this.byEndpoint.get(endpointKey) ?? 0;
  }

  /** In-flight requests over all endpoints. */
  total(): number {
    return this.count;
  }

  /** Endpoint keys with at least one request in flight. */
  keys(): IterableIterator<string> {
    return this.byEndpoint.keys();
  }
}
