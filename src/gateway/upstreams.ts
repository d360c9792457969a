/**
 * The model servers' connections, one keep-alive pool per endpoint, created on first use and
 * closed with the gateway, so connections are reused across requests and a dead endpoint's sockets
 * stay isolated from healthy ones. The forward path (src/gateway/forward.ts) runs on the router's
 * HTTP/1.1 client (src/http1); the P/D prefill leg and the sidecar's pass-through use undici's
 * `request()` API, so they get undici pools. Pools have no connection cap by default: a request
 * the router dispatched must queue on the model server, where `num_requests_waiting` shows it to
 * the saturation detector, not in a pool where no scraped metric counts it.
 */
import { Pool } from "undici";
import type { EndpointMetadata } from "../endpoints/endpoint.ts";
import { Http1Pool, type Http1PoolOptions } from "../http1/pool.ts";

/** Connection settings for every upstream pool. */
export interface UpstreamOptions {
  /**
   * Max sockets per endpoint (default unlimited). Every in-flight stream holds one, so a cap makes
   * requests beyond it wait inside the router, invisible to the endpoint's scraped queue depth.
   */
  connectionsPerEndpoint?: number;
  /** Connect timeout in ms (default 2000: a dead endpoint fails fast so the request moves on). */
  connectTimeoutMs?: number;
  /** Time to response headers in ms (default 600000: a long queue on the model server is normal). */
  headersTimeoutMs?: number;
  /** Max gap between body chunks in ms (default 300000). */
  bodyTimeoutMs?: number;
}

/** Idle time of a kept-alive upstream connection, at most (the server's hint may shorten it). */
const KEEP_ALIVE_MS = 30_000;

/** Origin URL of an endpoint (`http://address:port`). */
export function endpointOrigin(meta: EndpointMetadata): string {
  const host = meta.address.includes(":") ? `[${meta.address}]` : meta.address;
  return `http://${host}:${meta.port}`;
}

/** Lazily created pools keyed by origin. */
export class Upstreams {
  private readonly pools = new Map<string, Pool>();
  private readonly http1 = new Map<string, Http1Pool>();
  /** Per metadata object (stable while the endpoint is unchanged): skips building the origin string. */
  private readonly byMetadata = new WeakMap<EndpointMetadata, Http1Pool>();
  /** Both clients' limits, the defaults filled in. */
  private readonly limits: Http1PoolOptions;

  constructor(options: UpstreamOptions = {}) {
    this.limits = {
      connections: options.connectionsPerEndpoint,
      connectTimeoutMs: options.connectTimeoutMs ?? 2000,
      headersTimeoutMs: options.headersTimeoutMs ?? 600_000,
      bodyTimeoutMs: options.bodyTimeoutMs ?? 300_000,
      keepAliveMs: KEEP_ALIVE_MS,
    };
  }

  /** The forward path's pool for an endpoint (same instance for the same origin). */
  get(meta: EndpointMetadata): Http1Pool {
    let pool = this.byMetadata.get(meta);
    if (!pool || pool.closed) {
      const origin = endpointOrigin(meta);
      pool = this.http1.get(origin);
      if (!pool || pool.closed) {
        pool = new Http1Pool(meta.address, meta.port, this.limits);
        this.http1.set(origin, pool);
      }
      this.byMetadata.set(meta, pool);
    }
    return pool;
  }

  /** An undici pool for `origin` (`http://host:port`), e.g. a P/D prefill endpoint named by a header. */
  forOrigin(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      const limits = this.limits;
      pool = new Pool(origin, {
        connections: limits.connections ?? null,
        connectTimeout: limits.connectTimeoutMs,
        headersTimeout: limits.headersTimeoutMs,
        bodyTimeout: limits.bodyTimeoutMs,
        keepAliveTimeout: limits.keepAliveMs,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** Closes every pool (in-flight upstream requests are aborted). */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    for (const pool of this.http1.values()) pool.close();
    this.http1.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }
}
