/**
 * One request's path through the simulated router, in the order the gateway runs it:
 * prepare → schedule → preRequest → (engine) → firstToken → complete (exactly once), plus the
 * bookkeeping the metrics need (record, ideal-cache hit, closed-loop follow-ups).
 */
import { LlmdError } from "../api/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { EngineRequest, StepOutput } from "../engine/types.ts";
import type {
  RequestScheduler,
  SchedulingContext,
  SchedulingRequest,
  TerminationCause,
} from "../scheduler/framework/types.ts";
import type { IdealPrefixCache } from "../bench/metrics/ideal-cache.ts";
import { newRecord, type RequestRecord } from "../bench/metrics/records.ts";
import type { SyntheticPromptBuilder } from "../bench/workloads/synthetic-prompt.ts";
import type { Arrival, Workload, WorkloadRequest } from "../bench/workloads/types.ts";

/** Dependencies of the flow. */
export interface RequestFlowOptions {
  scheduler: RequestScheduler;
  clock: Clock;
  prompts: SyntheticPromptBuilder;
  ideal: IdealPrefixCache;
  model: string;
  /** Clock time of workload time 0, ms. */
  originMs: number;
}

/** A request that reached an endpoint decision. */
export interface Dispatched {
  endpoint: Endpoint;
  engineRequest: EngineRequest;
}

interface Live {
  request: WorkloadRequest;
  record: RequestRecord;
  ctx: SchedulingContext;
  endpoint: Endpoint | undefined;
}

/** Tracks every request from arrival to its follow-ups. */
export class RequestFlow {
  readonly records: RequestRecord[] = [];
  private readonly lives = new Map<string, Live>();
  private readonly ended = new Map<string, Live>();

  constructor(private readonly o: RequestFlowOptions) {}

  /** Requests dispatched and not yet finished. */
  get live(): number {
    return this.lives.size;
  }

  /**
   * Schedules a request; undefined when the scheduler rejected it (recorded as failed). Returns a
   * promise only when a producer is asynchronous (built-ins are not), so the event loop stays sync.
   */
  dispatch(
    arrival: Arrival,
    endpoints: readonly Endpoint[],
  ): Dispatched | undefined | Promise<Dispatched | undefined> {
    const request = arrival.request;
    const record = newRecord(request.id, request.kind ?? "default", arrival.atMs, request.inputTokens);
    this.records.push(record);
    const tokens = this.o.prompts.tokens(request.segments);
    const ctx: SchedulingContext = {
      request: this.schedulingRequest(request, tokens),
      state: new Map(),
      clock: this.o.clock,
    };
    const live: Live = { request, record, ctx, endpoint: undefined };
    const pending = this.o.scheduler.prepare(ctx, endpoints);
    if (pending) return pending.then(() => this.decide(live, endpoints));
    return this.decide(live, endpoints);
  }

  private decide(live: Live, endpoints: readonly Endpoint[]): Dispatched | undefined {
    const { request, record, ctx } = live;
    const result = this.o.scheduler.schedule(ctx, endpoints);
    const endpoint =
      result instanceof LlmdError
        ? undefined
        : result.profileResults.get(result.primaryProfileName)?.targetEndpoints[0];
    if (result instanceof LlmdError || !endpoint) {
      record.error = result instanceof LlmdError ? result.code : "no-endpoint";
      this.ended.set(request.id, live);
      return undefined;
    }
    this.o.scheduler.preRequest(ctx, result);
    live.endpoint = endpoint;
    record.endpoint = endpointIndex(endpoint, endpoints);
    this.lives.set(request.id, live);
    return {
      endpoint,
      engineRequest: { id: request.id, promptTokens: ctx.request.tokens!, maxTokens: request.outputTokens },
    };
  }

  /** The engine accepted the request: it joins the admitted population of the ideal ceiling. */
  admitted(id: string): void {
    const live = this.lives.get(id)!;
    live.record.idealCachedTokens = this.o.ideal.lookupAndInsert(
      live.request.segments,
      live.request.inputTokens,
    );
  }

  /** The engine refused a dispatched request. */
  fail(id: string, reason: string): void {
    const live = this.lives.get(id);
    if (!live) return;
    live.record.error = reason;
    this.finish(live, "error");
  }

  /** Applies one step output at `nowMs` (clock time); true when the request finished. */
  progress(output: StepOutput, stepStartMs: number, nowMs: number, endpoint: Endpoint): boolean {
    const live = this.lives.get(output.id);
    if (!live) return false;
    const record = live.record;
    if (Number.isNaN(record.startMs)) record.startMs = stepStartMs - this.o.originMs;
    if (output.first) {
      record.firstTokenMs = nowMs - this.o.originMs;
      record.cachedTokens = output.cachedTokens;
      this.o.scheduler.firstToken(live.ctx, endpoint);
    }
    if (!output.finished) return false;
    record.endMs = nowMs - this.o.originMs;
    record.outputTokens = output.generated;
    this.finish(live, "natural");
    return true;
  }

  /** Follow-up arrivals of an ended request (closed-loop workloads); call once per ended request. */
  takeFollowUps(id: string, workload: Workload): Arrival[] {
    const live = this.ended.get(id);
    if (!live) return [];
    this.ended.delete(id);
    const ok = live.record.error === undefined;
    const endMs = ok ? live.record.endMs : this.o.clock.now() - this.o.originMs;
    return workload.onComplete(live.request, endMs, ok);
  }

  private finish(live: Live, cause: TerminationCause): void {
    const r = live.record;
    this.lives.delete(r.id);
    this.ended.set(r.id, live);
    const usage =
      cause === "natural"
        ? { promptTokens: r.inputTokens, completionTokens: r.outputTokens, cachedTokens: r.cachedTokens }
        : undefined;
    this.o.scheduler.complete(live.ctx, live.endpoint!, cause, usage);
  }

  private schedulingRequest(request: WorkloadRequest, tokens: Uint32Array): SchedulingRequest {
    const prompts = this.o.prompts;
    let text: string | undefined;
    return {
      requestId: request.id,
      model: this.o.model,
      path: "/v1/completions",
      headers: request.sessionId ? { "x-session-id": request.sessionId } : {},
      // Materialised only if a plugin reads it: the tokens already carry the same content.
      get promptText() {
        text ??= prompts.text(request.segments);
        return text;
      },
      tokens,
      body: { model: this.o.model, max_tokens: request.outputTokens, stream: true },
      bodyBytes: request.inputTokens * 4,
      priority: 0,
      fairnessId: "default-flow",
      attributes: new Map(),
    };
  }
}

function endpointIndex(endpoint: Endpoint, endpoints: readonly Endpoint[]): number {
  return endpoints.indexOf(endpoint);
}
