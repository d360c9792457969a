/**
 * Names of the data that producers publish and plugins consume (llm-d's `DataKey` names). A plugin
 * definition lists them in `produces` / `consumes`; the config loader orders producers by them and
 * auto-adds the default producer (see `DEFAULT_PRODUCERS`) of a consumed key nobody produces.
 */

/** Token ids of the prompt (`request.tokens`). */
export const TOKENIZED_PROMPT = "TokenizedPrompt";
/** Per-endpoint prefix-cache match info (endpoint attribute). */
export const PREFIX_CACHE_MATCH_INFO = "PrefixCacheMatchInfo";
/** Per-endpoint in-flight requests and tokens tracked by the router (endpoint attribute). */
export const IN_FLIGHT_LOAD = "InFlightLoad";
/** Session id of the request (request attribute). */
export const SESSION_ID = "SessionID";
/** The request's session state before it (`ctx.state`), see {@link SessionState}. */
export const SESSION_STATE = "SessionState";
/** Per-endpoint placement (`ctx.state`, a `ReadonlyMap<endpointKey, Topology>`), see {@link Topology}. */
export const TOPOLOGY = "Topology";

/**
 * Per-endpoint multimodal encoder-cache match (`ctx.state`, a `ReadonlyMap<endpointKey,
 * EncoderCacheMatchInfo>`), published by `mm-embeddings-cache-producer`.
 */
export const ENCODER_CACHE_MATCH_INFO = "EncoderCacheMatchInfo";

/**
 * Request attribute holding the `Endpoint` a P/D handler picked in an earlier stage (the decode
 * pick before the prefill profile runs, or the prefill pick before decode in prefill-first order),
 * for plugins of the later profile to compare against (llm-d's `peer-endpoint`).
 */
export const PEER_ENDPOINT_ATTRIBUTE = "peer-endpoint";

/**
 * `ctx.state` key of a `Map<string, string>` of headers (lower-case names) that plugins add to the
 * upstream request at PreRequest, e.g. `x-data-parallel-host-port`; the gateway copies it into the
 * request it forwards.
 */
export const UPSTREAM_HEADERS_STATE_KEY = "upstream-headers";

/** The response-side twin: headers plugins want on the client response (e.g. a session token). */
export const RESPONSE_HEADERS_STATE_KEY = "response-headers";

/**
 * `ctx.state` key of a P/D profile handler's decision at PreRequest, one of {@link DisaggDecision};
 * hosts count it (`llm_d_epp_disagg_decision_total`).
 */
export const DISAGG_DECISION_STATE_KEY = "disagg-decision";

/** The stages a P/D request runs besides decode. */
export type DisaggDecision = "decode-only" | "prefill-decode" | "encode-decode" | "encode-prefill-decode";

/**
 * Request attribute naming the endpoint that served the previous turn of a Responses chain (it
 * holds the KV cache of the whole history); set by the router's Responses API.
 */
export const PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE = "previous-response-endpoint";

/** Request attribute naming a Responses chain (the id of its first item), set by the Responses API. */
export const RESPONSE_CHAIN_ATTRIBUTE = "response-chain";

/** Request attribute naming the agent session, set by the `agent-identity` header processor. */
export const AGENT_IDENTITY_ATTRIBUTE = "agent-identity";

/** llm-d's default producer type for each data key (§2.3 "missing producers auto-created"). */
export const DEFAULT_PRODUCERS: Readonly<Record<string, string>> = {
  [TOKENIZED_PROMPT]: "token-producer",
  [PREFIX_CACHE_MATCH_INFO]: "approx-prefix-cache-producer",
  [IN_FLIGHT_LOAD]: "inflight-load-producer",
  [SESSION_ID]: "session-id-producer",
  [ENCODER_CACHE_MATCH_INFO]: "mm-embeddings-cache-producer",
};

/**
 * Key under which producer instance `producerName` publishes `dataKey` in `Endpoint.attributes`,
 * `request.attributes` or `ctx.state` (llm-d's DataKey{name, producer}). Consumers with a
 * `…ProducerName` parameter compute it once at creation; the default producer name is its type.
 */
export function attributeKey(
  dataKey: string,
  producerName: string = DEFAULT_PRODUCERS[dataKey] ?? "",
): string {
  return `${producerName}/${dataKey}`;
}

/**
 * One endpoint's entry of `IN_FLIGHT_LOAD`, which the producer publishes in `ctx.state` as a
 * `ReadonlyMap<endpointKey, InFlightLoad>`: what the router has dispatched and not yet released.
 */
export interface InFlightLoad {
  /** Requests dispatched and not completed. */
  requests: number;
  /** Uncached prompt tokens dispatched and not yet prefilled (released at first token or end). */
  tokens: number;
}

/** Value of `PREFIX_CACHE_MATCH_INFO` on an endpoint for the current request. */
export interface PrefixCacheMatchInfo {
  /** Leading blocks of the prompt believed cached on this endpoint. */
  matchBlocks: number;
  /** Blocks in the prompt (capped by the producer's match limit). */
  totalBlocks: number;
  /** Tokens per block. */
  blockSizeTokens: number;
}

/** Where an endpoint runs, as `topology-extractor` publishes it; a missing field never matches. */
export interface Topology {
  hostname?: string;
  rack?: string;
  zone?: string;
  region?: string;
}

/** A session's state as `session-state-producer` publishes it (llm-d's fields). */
export interface SessionState {
  turnsTaken: number;
  /** Since the session's first request, ms. */
  durationMs: number;
  lastSeenAt: number;
  inFlightRequests: number;
  completedRequests: number;
  totalInputTokens: number;
  totalOutputTokens: number;
}

/** How many of a request's distinct media items an endpoint is believed to have encoded. */
export interface EncoderCacheMatchInfo {
  matchedItems: number;
  totalItems: number;
}

/**
 * `ctx.state` key of a {@link StagedPrefill} plan (`staged-prefill`): the host sends the prompt's
 * leading tokens up to each cut as a one-token request to the chosen endpoint, one after another,
 * before the request itself.
 */
export const STAGED_PREFILL_STATE_KEY = "staged-prefill";

/** Where a long cold prompt is cut into stages: ascending token offsets, each below the prompt's length. */
export interface StagedPrefill {
  readonly cuts: readonly number[];
  /** The prompt's tokens as the cuts count them (the engine's, or the router's estimate of a text). */
  readonly promptTokens: number;
  /** Of those, the ones the endpoint held before the stages (the router's view). */
  readonly cachedTokens: number;
  /**
   * A chat staged by its messages (the router does not know the engine's ids): how many leading
   * messages each stage sends, rendered without the generation prompt; `cuts` are where those
   * messages end by the router's count.
   */
  readonly messages?: readonly number[];
}
