/** What the gateway needs from its collaborators, as narrow structural contracts. */
import type { OutgoingHttpHeaders } from "node:http";
import type { LlmdError } from "../api/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { OperationalLog } from "../core/log.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { PooledEndpoint } from "../endpoints/pool.ts";
import type { RequestScheduler } from "../scheduler/framework/types.ts";
import type { AdmissionOptions } from "./admission.ts";
import type { PdOptions } from "./pd-dispatch.ts";
import type { PoolMetricsView } from "./pool-gauges.ts";
import type { ResponsesOptions } from "./responses-service.ts";
import type { UpstreamOptions } from "./upstreams.ts";
import type { ObjectiveMap } from "../lifecycle/identity.ts";

/** The endpoint pool as the gateway drives it (src/endpoints/pool.ts `EndpointPool` fits). */
export interface GatewayPool extends PoolMetricsView {
  /** Ready endpoints serving `model` (all ready endpoints when `model` is omitted). */
  candidates(model?: string): readonly Endpoint[];
  /** A request was sent to `key` (counts into `dispatchedSinceScrape`). */
  noteDispatched(key: string): void;
  /** `key` refused a connection: take it out of the candidates until it is healthy again. */
  markFailed(key: string): void;
  /** `key` answered that it is shutting down: out of the candidates until it restarts. */
  markDraining?(key: string): void;
  /** Union of served model names (for `/v1/models`). */
  models(): string[];
  /** Every known endpoint with its health (for `/debug/endpoints`); absent = the candidates only. */
  all?(): readonly PooledEndpoint[];
  /** Membership / health changes (flow control re-evaluates on them). */
  on?(event: "change", fn: () => void): void;
}

/** Everything `startGateway` composes. */
export interface GatewayOptions {
  scheduler: RequestScheduler;
  pool: GatewayPool;
  /** TCP port (0 = any free port; default 8080). */
  port?: number;
  /** Bind address (default 127.0.0.1). */
  host?: string;
  clock?: Clock;
  /** Request body limit in bytes (default 16 MiB); larger bodies get 413. */
  maxBodyBytes?: number;
  /** Bytes of request bodies held at once (default 1 GiB); a body past it gets 429. */
  maxInflightBodyBytes?: number;
  /** Bytes of token-id prompts held for the prompts that continue them (default 256 MiB; src/tokenizer/id-prompts.ts). */
  idPromptBytes?: number;
  /** Time to receive a request's headers, ms (default 60000, nginx's `client_header_timeout`); then 408. */
  headerTimeoutMs?: number;
  /** Longest gap between two body reads, ms (default 60000, nginx's `client_body_timeout`); then 408. */
  bodyTimeoutMs?: number;
  /** InferenceObjective name → priority (`x-llm-d-inference-objective`). */
  objectives?: ObjectiveMap;
  upstream?: UpstreamOptions;
  /** Endpoints tried per request when connections are refused (default 3). */
  maxAttempts?: number;
  /** `name` label of the pool gauges (default `default`). */
  poolName?: string;
  /** Flow control or legacy shedding (see admission.ts); absent = admit everything. */
  admission?: AdmissionOptions;
  /** Operational log (upstream failures); defaults to stderr. */
  log?: OperationalLog;
  /**
   * After a stream's first chunk, relay its chunks at most every this many ms, coalesced into one
   * write (default 0: each chunk written as it arrives). Cuts the router's per-token socket writes.
   */
  streamFlushMs?: number;
  /** The Responses API (`/v1/responses`) with its store; absent = those paths answer 404. */
  responses?: ResponsesOptions;
  /** Who runs P/D requests' two legs (default: the decode endpoint's sidecar, as llm-d). */
  pd?: PdOptions;
}

/**
 * Where the gateway writes a client's answer: the HTTP response itself (`ServerResponse` fits), or a
 * translator in front of it (the Responses API renders the model server's answer in its own shape).
 */
export interface ClientSink {
  readonly destroyed: boolean;
  readonly writableFinished: boolean;
  readonly writableEnded: boolean;
  readonly headersSent: boolean;
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  flushHeaders(): void;
  /** False when the client's socket is full: wait for `drain`. */
  write(chunk: Buffer | string): boolean;
  end(chunk?: Buffer | string): unknown;
  once(event: "close" | "drain", listener: () => void): unknown;
  off(event: "close" | "drain", listener: () => void): unknown;
  /** Ends a started stream with `error` in the sink's own framing (default: one `data: {"error":…}` event). */
  endWithError?(error: LlmdError): void;
}
