/**
 * The gateway's host of the request lifecycle (src/lifecycle): parse → candidates → admission →
 * placement → forward (retrying elsewhere when an endpoint is unreachable) → complete. Every
 * placement is completed exactly once, and every admission lease released exactly once, on every
 * path, so per-endpoint accounting in the plugins, the router's in-flight tracker and flow control
 * never drifts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { LlmdError } from "../api/errors.ts";
import type { OperationalLog } from "../core/log.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import {
  DISAGG_DECISION_STATE_KEY,
  RESPONSE_HEADERS_STATE_KEY,
  STAGED_PREFILL_STATE_KEY,
  type StagedPrefill,
  UPSTREAM_HEADERS_STATE_KEY,
} from "../scheduler/framework/data-keys.ts";
import type { RequestLifecycle } from "../lifecycle/lifecycle.ts";
import type { Placement } from "../lifecycle/placement.ts";
import type { ResponseUsage, SchedulingContext, SchedulingRequest } from "../scheduler/framework/types.ts";
import type { GatewayAdmission, Lease } from "./admission.ts";
import { type BodyBudget, type BodyLease, closesConnection, readBody } from "../api/request-body.ts";
import type { GatewayDrain } from "./drain.ts";
import { type ForwardOutcome, type ForwardRequest, forwardThen } from "./forward.ts";
import { upstreamRequestHeaders, withPluginHeaders } from "./headers.ts";
import { STAGED_TOKENS_HEADER } from "../api/openai.ts";
import type { InflightTracker } from "./inflight.ts";
import { interruptOf } from "./interrupt.ts";
import {
  endpointAt,
  type PdOptions,
  prefillerOf,
  withoutPrefiller,
  withPrefillServedBy,
} from "./pd-dispatch.ts";
import { forwardTwoLegs, type PrefillUnreachable, prefillUnreachable } from "./two-leg-forward.ts";
import type { GatewayMetrics, ModelSeries } from "./metrics.ts";
import { flattenHeaders, parseInferenceRequest } from "./parse-request.ts";
import type { HeldIdPrompts } from "../tokenizer/id-prompts.ts";
import { sendError } from "./respond.ts";
import type { StreamFlusher } from "./stream-flusher.ts";
import type { ClientSink, GatewayPool } from "./types.ts";
import {
  ChatStageBodies,
  IdStageBodies,
  type StageBodies,
  sendStages,
  TextStageBodies,
} from "./staged-prefill.ts";
import { endpointOrigin, type Upstreams } from "./upstreams.ts";

/** Shared, long-lived state the per-request flow uses. */
export interface InferenceDeps {
  lifecycle: RequestLifecycle;
  pool: GatewayPool;
  upstreams: Upstreams;
  metrics: GatewayMetrics;
  inflight: InflightTracker;
  admission: GatewayAdmission;
  maxBodyBytes: number;
  /** Longest gap between two body reads (ms; `--body-timeout`). */
  bodyTimeoutMs: number;
  /** The bytes of request bodies held at once (`--max-inflight-body-bytes`). */
  bodies: BodyBudget;
  /** Token-id prompts' arrays, so one that continues a held prompt is a longer view of its array. */
  idPrompts: HeldIdPrompts;
  maxAttempts: number;
  log: OperationalLog;
  /** Coalesces streamed chunks after the first (`streamFlushMs`; by default those that arrive together). */
  flusher: StreamFlusher | undefined;
  /** The graceful shutdown: its signal cuts off what still runs at the drain timeout. */
  drain: GatewayDrain;
  /** Who runs P/D requests' two legs. */
  pd: PdOptions;
}

const noEndpoints = (model: string) =>
  new LlmdError("no_endpoints", `no ready endpoint serves model '${model}'`);
const unknownModel = (model: string) =>
  new LlmdError("model_not_found", `The model '${model}' does not exist.`, { param: "model" });

/**
 * What a request held by the gateway costs per body byte: the raw body (forwarded, re-sent on a
 * retry) and its parsed copy (JSON.parse's strings are about the body's size; V8 keeps ASCII text
 * at one byte a character), and for chat also the rendered prompt. Measured against RSS in
 * docs/benchmarks-router.md ("Soak and backlog").
 */
const HELD_PER_BODY_BYTE = 2;
const HELD_PER_CHAT_BODY_BYTE = 3;

/**
 * Reads the body under the gateway's bounds (size, held bytes, read timeout) and runs `serve` on
 * it; a body that breaks a bound is answered here (408 and 429 close the connection, the rest of
 * the body unread). The body counts against the held-bodies budget, `heldPerByte` per byte, until
 * `serve` settles; its bytes are reused then, unless `serve` left a hold on `lease`. Never rejects.
 */
export async function withBody(
  deps: InferenceDeps,
  req: IncomingMessage,
  res: ServerResponse,
  serve: (raw: Buffer, lease: BodyLease) => Promise<void>,
  heldPerByte = HELD_PER_CHAT_BODY_BYTE,
): Promise<void> {
  const lease = deps.bodies.lease(heldPerByte);
  try {
    const limits = { limitBytes: deps.maxBodyBytes, timeoutMs: deps.bodyTimeoutMs, lease };
    let raw: Buffer | LlmdError;
    try {
      raw = await readBody(req, limits);
    } catch {
      return;
    }
    if (raw instanceof LlmdError)
      return sendError(res, raw, closesConnection(raw) ? { connection: "close" } : {});
    await serve(raw, lease);
  } catch (err) {
    // A bug must not become an unhandled rejection (which ends the process): 500 internal_error.
    deps.log(
      "warn",
      `unexpected error serving ${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}`,
    );
    if (!res.headersSent) sendError(res, err);
    else res.destroy();
  } finally {
    lease.release();
  }
}

/** Serves one POST to an inference path. Never rejects. */
export function handleInference(
  deps: InferenceDeps,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const heldPerByte = path === "/v1/chat/completions" ? HELD_PER_CHAT_BODY_BYTE : HELD_PER_BODY_BYTE;
  return withBody(
    deps,
    req,
    res,
    (raw, lease) => {
      const request = parseInferenceRequest(path, flattenHeaders(req.headers), raw, lease);
      if (!(request instanceof LlmdError)) {
        if (request.tokens) request.tokens = deps.idPrompts.hold(request.tokens);
        return serveRequest(deps, request, upstreamBody(request, raw), res);
      }
      sendError(res, request);
      return ANSWERED;
    },
    heldPerByte,
  );
}

/**
 * Runs a parsed request through the lifecycle and forwards `body` to `request.path` on the picked
 * endpoint, answering on `sink`. Never rejects.
 */
export function serveRequest(
  deps: InferenceDeps,
  request: SchedulingRequest,
  body: Buffer,
  sink: ClientSink,
): Promise<void> {
  const endpoints = deps.pool.candidates(request.model);
  if (endpoints.length === 0) {
    sendError(sink, missingEndpointsError(deps.pool, request.model));
    return ANSWERED;
  }
  // Client-chosen model names would make label cardinality unbounded: only served models count.
  const model = deps.pool.models().includes(request.model) ? request.model : "other";
  const series = deps.metrics.forModel(model);
  return new RequestFlow(deps, request, body, series, sink).run(endpoints);
}

/** What `serveRequest` returns for a request answered at once. */
const ANSWERED: Promise<void> = Promise.resolve();

/** The eviction handler given to an admission that never evicts (legacy shedding). */
const NEVER_EVICTED = (): void => {};

/** A header map a plugin left in `ctx.state` under `key`, if any. */
function stateHeaders(ctx: SchedulingContext, key: string): ReadonlyMap<string, string> | undefined {
  const value = ctx.state.get(key);
  return value instanceof Map ? (value as ReadonlyMap<string, string>) : undefined;
}

function missingEndpointsError(pool: GatewayPool, model: string): LlmdError {
  const models = pool.models();
  return models.length > 0 && !models.includes(model) ? unknownModel(model) : noEndpoints(model);
}

/** The raw body, re-serialised only when a model rewrite changed the target model. */
function upstreamBody(request: SchedulingRequest, raw: Buffer): Buffer {
  if (request.body.model === request.model) return raw;
  return Buffer.from(JSON.stringify({ ...request.body, model: request.model }));
}

/** What an attempt came to: "done", an error to answer with, or the key of the unreachable endpoint. */
type Step = "done" | LlmdError | string;

/**
 * State of one admitted request across its attempts. The common request runs from admission to the
 * upstream write in one call and on from the upstream's events through callbacks, not a chain of
 * awaits: nothing suspended is held per request while it waits for its answer but this object.
 */
class RequestFlow {
  private readonly startedAt: number;
  private firstByteAt: number | undefined;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly streaming: boolean;
  private lease: Lease | undefined;
  private usage: ResponseUsage | undefined;
  /**
   * Aborted (reason: 429 `evicted`) when flow control evicts this request, or with the drain's
   * `shutting_down` when the drain timeout passes. Only a queueing admission (flow control)
   * evicts, so legacy admission's hot path allocates none and forwards under the drain's deadline.
   */
  private readonly eviction: AbortController | undefined;
  /** The eviction's listener on the drain's signal (queueing admission only). */
  private cutOff: (() => void) | undefined;
  /** The attempt in flight, and how many were made before it. */
  private placement: Placement | undefined;
  private attemptsMade = 0;
  /** `run`'s promise: settled once the request is answered and accounted for, or on a bug. */
  private finished!: () => void;
  private broke!: (error: unknown) => void;
  /**
   * The attempt's callbacks, bound methods: V8 allocates a function literal assigned to a property
   * in the old generation, from where it would keep this request's objects alive through every
   * scavenge (test/architecture/young-closures.test.ts); an arrow-function field costs an
   * `Object.defineProperty` per request under tsx (esbuild's `keepNames`).
   */
  private readonly onFirstByte: () => void;
  private readonly onOutcome: (outcome: ForwardOutcome | PrefillUnreachable) => void;

  constructor(
    private readonly deps: InferenceDeps,
    private readonly request: SchedulingRequest,
    private readonly body: Buffer,
    private readonly series: ModelSeries,
    private readonly res: ClientSink,
  ) {
    this.startedAt = performance.now();
    this.headers = upstreamRequestHeaders(request.headers, request.requestId, body.length);
    this.streaming = request.body.stream === true;
    this.eviction = deps.admission.queues ? new AbortController() : undefined;
    this.onFirstByte = this.firstByte.bind(this);
    this.onOutcome = this.outcomeArrived.bind(this);
  }

  private firstByte(): void {
    this.firstByteAt = performance.now();
    if (this.placement) this.deps.lifecycle.firstToken(this.placement);
  }

  private outcomeArrived(outcome: ForwardOutcome | PrefillUnreachable): void {
    try {
      this.attempted(outcome);
    } catch (error) {
      this.broke(error);
    }
  }

  /** Admission, then attempts until one is done; resolves once the request is accounted for. */
  run(candidates: readonly Endpoint[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.finished = resolve;
      this.broke = reject;
      this.deps.metrics.requestStarted(this.series);
      this.cutOff = this.eviction && this.followDrain(this.eviction);
      const admitting = this.eviction
        ? this.admitQueued(this.eviction, candidates)
        : this.deps.admission.admit(this.request, candidates, undefined, NEVER_EVICTED);
      if (admitting instanceof Promise)
        admitting.then((admitted) => this.admitted(admitted, candidates)).catch(reject);
      else this.admitted(admitting, candidates);
    });
  }

  private admitted(admitted: Lease | LlmdError, candidates: readonly Endpoint[]): void {
    if (admitted instanceof LlmdError) {
      this.fail(admitted);
      this.end();
      return;
    }
    this.lease = admitted;
    // Time spent queued may have changed the pool.
    const { admission, pool } = this.deps;
    const endpoints = admission.queues ? pool.candidates(this.request.model) : candidates;
    if (endpoints.length > 0) this.attempt(endpoints);
    else this.attemptsEnded(noEndpoints(this.request.model));
  }

  /** One scheduling + dispatch attempt over `endpoints` (not empty); `attempted` takes its outcome. */
  private attempt(endpoints: readonly Endpoint[]): void {
    const placed = this.deps.lifecycle.place(this.request, endpoints);
    if (placed instanceof Promise)
      placed.then((placement) => this.dispatchPlaced(placement)).catch(this.broke);
    else this.dispatchPlaced(placed);
  }

  private dispatchPlaced(placement: Placement | LlmdError): void {
    if (placement instanceof LlmdError) {
      this.attemptsEnded(placement);
      return;
    }
    this.placement = placement;
    const key = placement.target.metadata.key;
    this.deps.inflight.add(key);
    try {
      this.dispatch(placement);
    } catch (error) {
      this.deps.inflight.remove(key);
      throw error;
    }
  }

  /** The attempt's outcome: the request is done, failed, or tried again elsewhere. */
  private attempted(outcome: ForwardOutcome | PrefillUnreachable): void {
    const placement = this.placement as Placement;
    this.deps.inflight.remove(placement.target.metadata.key);
    const step = this.stepOf(placement, outcome);
    if (step === "done" || step instanceof LlmdError) {
      this.attemptsEnded(step === "done" ? undefined : step);
      return;
    }
    const endpoints = this.deps.pool.candidates(this.request.model).filter((e) => e.metadata.key !== step);
    this.attemptsMade++;
    if (this.attemptsMade < this.deps.maxAttempts && endpoints.length > 0) this.attempt(endpoints);
    else this.attemptsEnded(noEndpoints(this.request.model));
  }

  private stepOf(placement: Placement, outcome: ForwardOutcome | PrefillUnreachable): Step {
    const { lifecycle, pool } = this.deps;
    if (outcome.kind === "prefill-unreachable") return this.prefillGone(placement, outcome);
    const target = placement.target;
    if (outcome.kind === "unreachable") {
      lifecycle.complete(placement, "error", undefined);
      if (outcome.draining && pool.markDraining) pool.markDraining(target.metadata.key);
      else pool.markFailed(target.metadata.key);
      return target.metadata.key;
    }
    lifecycle.complete(placement, outcome.cause, outcome.usage);
    if (outcome.failure) this.deps.log("warn", `request ${this.request.requestId}: ${outcome.failure}`);
    this.usage = outcome.usage;
    this.record(outcome);
    return "done";
  }

  /** No attempt is left to make: answers `failure` if any, releases the admission lease. */
  private attemptsEnded(failure: LlmdError | undefined): void {
    if (failure) this.fail(failure);
    this.lease?.release(this.usage);
    this.end();
  }

  private end(): void {
    if (this.cutOff) this.deps.drain.signal.removeEventListener("abort", this.cutOff);
    this.deps.metrics.requestEnded(this.series, this.elapsed(), this.ttft(), this.streaming);
    this.finished();
  }

  /** Aborts `eviction` with the drain's reason when the drain timeout passes; returns the listener. */
  private followDrain(eviction: AbortController): () => void {
    const signal = this.deps.drain.signal;
    const cutOff = () => eviction.abort(signal.reason);
    signal.addEventListener("abort", cutOff, { once: true });
    return cutOff;
  }

  /** Admission that may queue (flow control): leaving the client cancels the wait. */
  private async admitQueued(
    eviction: AbortController,
    candidates: readonly Endpoint[],
  ): Promise<Lease | LlmdError> {
    const { admission } = this.deps;
    const client = new AbortController();
    const onClose = () => {
      if (!this.res.writableFinished) client.abort();
    };
    this.res.once("close", onClose);
    try {
      return await admission.admit(this.request, candidates, client.signal, (error) => eviction.abort(error));
    } finally {
      this.res.off("close", onClose);
    }
  }

  /**
   * Forwards to `target` with the headers PreRequest plugins left in `ctx.state` (llm-d's
   * contract); a P/D request with `pd.legs: "router"` runs its two legs from here. The outcome
   * goes to `onOutcome`.
   */
  private dispatch(placement: Placement): void {
    const { pool, upstreams, pd } = this.deps;
    const { ctx, target } = placement;
    const key = target.metadata.key;
    const decision = ctx.state.get(DISAGG_DECISION_STATE_KEY);
    if (typeof decision === "string") this.series.disaggDecisions(decision).inc();
    const pluginHeaders = stateHeaders(ctx, UPSTREAM_HEADERS_STATE_KEY);
    const prefiller = prefillerOf(pluginHeaders);
    const prefillKey = prefiller && (endpointAt(pool, prefiller)?.metadata.key ?? prefiller);
    const responseHeaders = stateHeaders(ctx, RESPONSE_HEADERS_STATE_KEY);
    const request: ForwardRequest = {
      path: this.request.path,
      headers: withPluginHeaders(this.headers, pluginHeaders),
      body: this.body,
      requestId: this.request.requestId,
      endpointKey: key,
      onFirstByte: this.onFirstByte,
      responseHeaders: prefillKey ? withPrefillServedBy(responseHeaders, prefillKey) : responseHeaders,
      signal: this.eviction ? interruptOf(this.eviction.signal) : this.deps.drain.deadline,
      flusher: this.deps.flusher,
    };
    pool.noteDispatched(key);
    // The prefill leg is load on its endpoint too, whoever sends it (the sidecar or the router).
    if (prefillKey) pool.noteDispatched(prefillKey);
    this.lease?.placed(key);
    const decode = upstreams.get(target.metadata);
    const stages = ctx.state.get(STAGED_PREFILL_STATE_KEY) as StagedPrefill | undefined;
    if (stages && !prefiller) {
      this.stageThenForward(stages, target, (staged) =>
        forwardThen(decode, withStagedTokens(request, staged), this.res, this.onOutcome),
      );
      return;
    }
    if (!prefiller || !pluginHeaders || pd.legs !== "router") {
      forwardThen(decode, request, this.res, this.onOutcome);
      return;
    }
    const legs = {
      ...request,
      body: { ...this.request.body, model: this.request.model },
      headers: withPluginHeaders(this.headers, withoutPrefiller(pluginHeaders)),
      signal: this.eviction?.signal ?? this.deps.drain.signal,
      prefillHostPort: prefiller,
      prefill: upstreams.forOrigin(`http://${prefiller}`),
      decode,
      retry: pd.retry,
    };
    forwardTwoLegs(legs, this.res).then(this.onOutcome, this.broke);
  }

  /**
   * Sends the plan's stages to the target, then `forward`s the request with the tokens the answered
   * stages prefilled; a client that left during the stages ends the attempt as a disconnect.
   */
  private stageThenForward(plan: StagedPrefill, target: Endpoint, forward: (staged: number) => void): void {
    const client = new AbortController();
    const onClose = () => {
      if (!this.res.writableFinished) client.abort(new Error("client disconnected"));
    };
    this.res.once("close", onClose);
    const stages = {
      bodies: stageBodies(this.request, plan),
      cuts: plan.cuts,
      headers: this.headers,
      signal: AbortSignal.any([client.signal, this.eviction?.signal ?? this.deps.drain.signal]),
    };
    const origin = endpointOrigin(target.metadata);
    void sendStages(this.deps.upstreams.forOrigin(origin), stages).then((answered) => {
      this.res.off("close", onClose);
      this.deps.metrics.staged(plan.cuts.length, answered);
      if (client.signal.aborted)
        this.onOutcome({ kind: "done", cause: "client-disconnect", status: 499, usage: undefined });
      else forward(answered > 0 ? plan.cuts[answered - 1]! - plan.cachedTokens : 0);
    });
  }

  /**
   * The router's prefill endpoint did no work: out of the candidates (failed, or draining) so the
   * next attempt places the request on another; its key, or the 502 when it is not in the pool.
   */
  private prefillGone(placement: Placement, outcome: PrefillUnreachable): string | LlmdError {
    this.deps.lifecycle.complete(placement, "error", undefined);
    const hostPort = prefillerOf(stateHeaders(placement.ctx, UPSTREAM_HEADERS_STATE_KEY)) ?? "";
    const prefill = endpointAt(this.deps.pool, hostPort);
    this.deps.log("warn", `request ${this.request.requestId}: prefill ${hostPort}: ${outcome.message}`);
    if (!prefill) return prefillUnreachable(hostPort, outcome.message);
    const pool = this.deps.pool;
    if (outcome.draining && pool.markDraining) pool.markDraining(prefill.metadata.key);
    else pool.markFailed(prefill.metadata.key);
    return prefill.metadata.key;
  }

  private record(outcome: Extract<ForwardOutcome, { kind: "done" }>): void {
    const { metrics } = this.deps;
    if (outcome.usage) metrics.usage(this.series, outcome.usage);
    if (outcome.cause === "client-disconnect") metrics.requestFailed(this.series, "client_disconnect");
    else if (outcome.status >= 400) metrics.requestFailed(this.series, `http_${outcome.status}`);
  }

  private fail(error: LlmdError): void {
    this.deps.metrics.requestFailed(this.series, error.code);
    sendError(this.res, error);
  }

  private elapsed(): number {
    return (performance.now() - this.startedAt) / 1000;
  }

  private ttft(): number | undefined {
    return this.firstByteAt === undefined ? undefined : (this.firstByteAt - this.startedAt) / 1000;
  }
}

/** A plan's stage bodies: the prompt's ids when the router knows the engine's, a chat's messages, else its text. */
function stageBodies(request: SchedulingRequest, plan: StagedPrefill): StageBodies {
  const salt = request.body.cache_salt;
  const model = { model: request.model, cacheSalt: typeof salt === "string" ? salt : undefined };
  if (request.tokens && request.exactTokens)
    return new IdStageBodies(model, request.tokens, plan.cuts.at(-1)!);
  if (plan.messages) return new ChatStageBodies(request.model, request.body, plan);
  return new TextStageBodies(model, request.promptParts?.[0] ?? request.promptText, plan.promptTokens);
}

/** `request` with the staged tokens named in a response header (unchanged when none were). */
function withStagedTokens(request: ForwardRequest, staged: number): ForwardRequest {
  if (staged === 0) return request;
  const responseHeaders = new Map(request.responseHeaders ?? []);
  responseHeaders.set(STAGED_TOKENS_HEADER, String(staged));
  return { ...request, responseHeaders };
}
