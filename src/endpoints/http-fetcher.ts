/**
 * The pool's one HTTP client for scrapes, health probes and `/v1/models`: a keep-alive undici
 * Agent with short timeouts and a response-size cap, so a slow or hostile server cannot stall or
 * flood the router.
 */
import { readFileSync } from "node:fs";
import { Agent } from "undici";
import { type FetchOutcome, getText } from "./text-get.ts";

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

/** GETs text over one shared keep-alive connection pool. */
export class HttpFetcher {
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(options: HttpFetcherOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      connectTimeout: this.timeoutMs,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      maxResponseSize: options.maxBodyBytes ?? 16 * 1024 * 1024,
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
    return getText(this.agent, origin, path, this.timeoutMs);
  }

  /** Closes idle connections and refuses new requests. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}
