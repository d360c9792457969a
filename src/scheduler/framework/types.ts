/**
 * Contracts of the scheduling framework, in the spirit of llm-d's EPP (profile handler, filters,
 * scorers, pickers, data producers, pre-request and response hooks). Scheduling is synchronous
 * and pure over an endpoint snapshot and an injected clock: the gateway and the fleet simulator
 * run exactly this code. A plugin instance may implement several of these interfaces.
 */
import type { LlmdError } from "../../api/errors.ts";
import type { TextPiece } from "../../api/prompt.ts";
import type { Clock } from "../../core/clock.ts";
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type { Plugin } from "../../plugin/types.ts";

/** The request as the scheduler sees it. Headers are lower-cased. */
export interface SchedulingRequest {
  /** `x-request-id` or generated. */
  requestId: string;
  /** Target model after any rewrite. */
  model: string;
  /** Request path, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Readonly<Record<string, string>>;
  /** Prompt text as hashed for prefix affinity (completions prompt, or the rendered chat). */
  promptText: string;
  /**
   * `promptText` as pieces that concatenate to it, when the host has them without building it
   * (the gateway: a large body's ASCII strings as its bytes, so the prompt is hashed and measured
   * without ever being decoded; `promptText` is then built only if read).
   */
  promptParts?: readonly TextPiece[];
  /**
   * The owner of the body's bytes when they are a receive buffer reused for later requests (the
   * gateway's large bodies): `promptParts` and `body`'s long strings not read yet are views of
   * those bytes, valid until the request has completed (its `onResponseComplete` ran). Work that
   * reads them later takes `hold()` before then and calls what it returns once done.
   */
  bodyHolder?: BodyHolder;
  /** Token ids when known (the token producer fills them from `promptText`). */
  tokens?: Uint32Array;
  /**
   * True when `tokens` are the ids the model server runs: a token-id prompt, a model tokenizer's
   * ids, the fleet's workloads. An estimate (the 4-characters-a-token stand-in) leaves it unset.
   */
  exactTokens?: boolean;
  /** Parsed JSON body (read-only for plugins). */
  body: Readonly<Record<string, unknown>>;
  /** Size of the raw request body in bytes. */
  bodyBytes: number;
  /** Priority from the InferenceObjective (0 default; negative = sheddable). */
  priority: number;
  /** Flow/tenant id (`x-llm-d-inference-fairness-id`, agent identity, else `default-flow`). */
  fairnessId: string;
  /** The authenticated tenant, on a trusted edge (a tenant map is configured). */
  tenant?: string;
  /**
   * Prompt length in tokens when the host knows it without tokenizing (the fleet's workloads do);
   * otherwise admission counts it from `promptText`.
   */
  inputTokens?: number;
  /** Request-scoped attributes written by header processors and producers (e.g. `agent-identity`). */
  attributes: Map<string, unknown>;
}

/** Keeps a request's body bytes from reuse until the function `hold` returns is called. */
export interface BodyHolder {
  hold(): () => void;
}

/**
 * Everything one request's plugins share from arrival to completion: the request, per-cycle
 * state (producer outputs keyed by producer name) and the clock.
 */
export interface SchedulingContext {
  readonly request: SchedulingRequest;
  readonly state: Map<string, unknown>;
  readonly clock: Clock;
}

/** Keeps the endpoints that may serve the request. Returns a new array or the input unchanged. */
export interface Filter extends Plugin {
  filter(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[];
}

/** llm-d's informational scorer category. */
export type ScorerCategory = "affinity" | "distribution" | "balance";

/**
 * Narrows the candidates of the whole request before any profile runs (llm-d's Screener), so every
 * profile of one request (e.g. its prefill and its decode) chooses from the same screened set.
 */
export interface Screener extends Plugin {
  screen(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[];
}

/** Scores endpoints in [0,1]; the result is aligned by index with `endpoints`. */
export interface Scorer extends Plugin {
  readonly category: ScorerCategory;
  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): ArrayLike<number>;
}

export interface ScoredEndpoint {
  endpoint: Endpoint;
  /** Weighted sum of clamped scores. */
  score: number;
}

/** Outcome of one profile run. */
export interface ProfileRunResult {
  /** Picked endpoints, best first (the gateway retries down this list). */
  targetEndpoints: Endpoint[];
  /** All candidates with their scores (for diagnostics and `--emit-endpoint-scores`). */
  scored: ScoredEndpoint[];
}

/**
 * Chooses from scored candidates. `profile` names the profile running it: one picker instance may
 * serve several profiles (a P/D config's prefill and decode), and rotation state is per profile.
 */
export interface Picker extends Plugin {
  pick(ctx: SchedulingContext, scored: ScoredEndpoint[], profile?: string): ProfileRunResult;
}

/** A named scheduling profile: filters, weighted scorers, one picker. */
export interface SchedulerProfile {
  readonly name: string;
  readonly filters: readonly Filter[];
  readonly scorers: readonly { scorer: Scorer; weight: number }[];
  readonly picker: Picker;
}

/** The decision for one request: results per profile run and which is primary. */
export interface SchedulingResult {
  primaryProfileName: string;
  profileResults: Map<string, ProfileRunResult | null>;
}

/** Decides which profiles run (possibly over several rounds) and which result is primary. */
export interface ProfileHandler extends Plugin {
  /** Profiles to run next given results so far; empty when done. */
  pickProfiles(
    ctx: SchedulingContext,
    profiles: ReadonlyMap<string, SchedulerProfile>,
    results: ReadonlyMap<string, ProfileRunResult | null>,
  ): SchedulerProfile[];
  /**
   * Final result, or an error value (e.g. 429 `rejected-saturated` when nothing was picked).
   * `results` is this request's own map of runs: it may be returned as the result's `profileResults`.
   */
  processResults(
    ctx: SchedulingContext,
    results: Map<string, ProfileRunResult | null>,
  ): SchedulingResult | LlmdError;
}

/** Sets request attributes from headers before admission (e.g. `agent-identity`). */
export interface RequestHeaderProcessor extends Plugin {
  processRequestHeaders(ctx: SchedulingContext): void;
}

/**
 * Produces data for scorers/filters before scheduling (prefix match, in-flight load, tokens…),
 * writing into `ctx.state`, `ctx.request` or endpoint attributes. Built-ins are synchronous;
 * one needing I/O may return a promise, which the gateway awaits with a deadline.
 */
export interface DataProducer extends Plugin {
  produce(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void | Promise<void>;
}

/** A plugin that counts sessions' turns (`session-state-producer`); admission reads it for flow control. */
export interface SessionTurns extends Plugin {
  turnsTaken(sessionId: string): number;
}

/** Runs after a decision, before dispatch (e.g. optimistic prefix-index insert, in-flight add). */
export interface PreRequest extends Plugin {
  preRequest(ctx: SchedulingContext, result: SchedulingResult): void;
}

/** Token usage read from a response. */
export interface ResponseUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** Why a response ended. */
export type TerminationCause = "natural" | "client-disconnect" | "error" | "evicted" | "timeout";

/**
 * Response lifecycle hooks. `onResponseComplete` is called exactly once for every request that
 * reached `preRequest`, on every exit path, so per-endpoint accounting never drifts.
 */
export interface ResponseHooks extends Plugin {
  onFirstToken?(ctx: SchedulingContext, endpoint: Endpoint): void;
  onResponseComplete?(
    ctx: SchedulingContext,
    endpoint: Endpoint,
    cause: TerminationCause,
    usage: ResponseUsage | undefined,
  ): void;
}

/**
 * The scheduler as its hosts (gateway, fleet simulator) drive it, for one request:
 *   processRequestHeaders → (admission) → prepare → schedule → preRequest → (dispatch) →
 *   firstToken? → complete (exactly once).
 */
export interface RequestScheduler {
  /** Runs the request-header processors, once per request before admission (they may name its flow). */
  processRequestHeaders(ctx: SchedulingContext): void;
  /** Runs the data producers. Sync unless a producer needs I/O. */
  prepare(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void | Promise<void>;
  /** Runs the profile handler's profiles; pure given the context and endpoints. */
  schedule(ctx: SchedulingContext, endpoints: readonly Endpoint[]): SchedulingResult | LlmdError;
  /** Runs pre-request plugins for the decision (call once, just before dispatch). */
  preRequest(ctx: SchedulingContext, result: SchedulingResult): void;
  /** The first token (or first body byte) arrived from `endpoint`. */
  firstToken(ctx: SchedulingContext, endpoint: Endpoint): void;
  /** The request ended on `endpoint`, on any path. Must be called exactly once after preRequest. */
  complete(
    ctx: SchedulingContext,
    endpoint: Endpoint,
    cause: TerminationCause,
    usage: ResponseUsage | undefined,
  ): void;
}
