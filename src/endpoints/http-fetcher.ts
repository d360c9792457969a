/**
 * The pool's one HTTP client for scrapes, health probes and `/v1/models`: keep-alive connections
 * with short timeouts and a response-size cap, so a slow or hostile server cannot stall or flood
 * the router. Plain http goes through the router's HTTP/1.1 client (src/http1: one pool per
 * origin, its connection kept between the 50 ms scrapes), https through an undici Agent.
 */
import { readFileSync } from "node:fs";
import { Agent } from "undici";
import { Http1Pool } from "../http1/pool.ts";
import { type FetchOutcome, getText } from "./text-get.ts";

const KEEP_ALIVE_MS = 30_000;

/** Options of {@link HttpFetcher}. */
export interface HttpFetcherOptions {
  /** Whole-request timeout per GET in ms (default 1000). */
  timeoutMs?: number;
  /** Largest body accepted in bytes (default 16 MiB). */
  maxBodyBytes?: number;
  /** Skip TLS verification for https scrapes (llm-d's `insecureSkipVerify`, default true). */
  insecureSkipVerify?: boolean;
  /** PEM files read once at construction (a missing file throws: a startup error). */
  tlsFiles?: TlsFiles;
}

/** Paths of PEM files for https: a CA bundle to verify servers, and a client certificate and key for mTLS. */
export interface TlsFiles {
  caCertPath?: string;
  clientCertPath?: string;
  clientKeyPath?: string;
}

function readPem(path: string | undefined): string | undefined {
  return path === undefined ? undefined : readFileSync(path, "utf8");
}

/** GETs text over keep-alive connections shared by every caller. */
export class HttpFetcher {
  private readonly agent: Agent;
  /** Plain-http origins' pools; ones left without a connection are dropped when a new origin comes. */
  private readonly pools = new Map<string, Http1Pool>();
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;

  constructor(options: HttpFetcherOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
    this.agent = new Agent({
      keepAliveTimeout: KEEP_ALIVE_MS,
      connectTimeout: this.timeoutMs,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connect: {
        rejectUnauthorized: !(options.insecureSkipVerify ?? true),
        ca: readPem(options.tlsFiles?.caCertPath),
        cert: readPem(options.tlsFiles?.clientCertPath),
        key: readPem(options.tlsFiles?.clientKeyPath),
      },
    });
  }

  /** GETs `path` from `origin` (`http://host:port`); never throws for network or HTTP failures. */
  getText(origin: string, path: string): Promise<FetchOutcome> {
    const client = origin.startsWith("http://") ? this.poolFor(origin) : this.agent;
    return getText(client, origin, path, this.timeoutMs, this.maxBodyBytes);
  }

  /** Closes idle connections and refuses new requests. */
  async close(): Promise<void> {
    for (const pool of this.pools.values()) pool.close();
    this.pools.clear();
    await this.agent.close();
  }

  private poolFor(origin: string): Http1Pool {
    let pool = this.pools.get(origin);
    if (pool) return pool;
    // A new origin (an endpoint added): forget those whose endpoints went away, so churn cannot grow the map.
    for (const [key, idle] of this.pools) if (idle.size === 0) this.pools.delete(key);
    const { hostname, port } = new URL(origin);
    const host = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
    const t = this.timeoutMs;
    pool = new Http1Pool(host, Number(port || 80), {
      connectTimeoutMs: t,
      headersTimeoutMs: t,
      bodyTimeoutMs: t,
      keepAliveMs: KEEP_ALIVE_MS,
    });
    this.pools.set(origin, pool);
    return pool;
  }
}
