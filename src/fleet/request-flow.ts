/**
 * One request's path through the simulated router, in the order the gateway runs it:
 * arrive (admission) → prepare → schedule → preRequest → (engine) → firstToken → complete (exactly
 * once), plus the bookkeeping the metrics need (record, ideal-cache hit, closed-loop follow-ups).
 * Every arrival gets exactly one final outcome (served, rejected-<reason>, evicted, failed-<code>).
 */
import { LlmdError } from "../api/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { EngineRequest, StepOutput } from "../engine/types.ts";
import type {
  RequestScheduler,
  ResponseUsage,
  SchedulingContext,
  SchedulingRequest,
  TerminationCause,
} from "../scheduler/framework/types.ts";
import type { IdealPrefixCache } from "../measure/ideal-cache.ts";
import { type RequestRecord, recordFor } from "../measure/records.ts";
import type { FlowItem } from "../flow-control/types.ts";
import type { SyntheticPromptBuilder } from "../workload/synthetic-prompt.ts";
import type { Arrival, Workload, WorkloadRequest } from "../workload/types.ts";

/** Dependencies of the flow. */
export interface RequestFlowOptions {
  scheduler: RequestScheduler;
  clock: Clock;
  prompts: SyntheticPromptBuilder;
  ideal: IdealPrefixCache;
  model: string;
  /** Clock time of workload time 0, ms. */
  originMs: number;
  /** InferenceObjective name → priority (unknown or none = 0). */
  objectives: Readonly<Record<string, number>>;
}

/** A request that reached an endpoint decision. */
export interface Dispatched {
  endpoint: Endpoint;
  engineRequest: EngineRequest;
}

interface Live {
  request: WorkloadRequest;
  record: RequestRecord;
  ctx: SchedulingContext | undefined;
  endpoint: Endpoint | undefined;
}

/** Tracks every request from arrival to its follow-ups. */
export class RequestFlow {
  readonly records: RequestRecord[] = [];
  private readonly waiting = new Map<string, Live>();
  private readonly lives = new Map<string, Live>();
  private readonly ended = new Map<string, Live>();

  constructor(private readonly o: RequestFlowOptions) {}

  /** Requests arrived and not yet ended (waiting in admission or running). */
  get live(): number {
    return this.lives.size + this.waiting.size;
  }

  /** A request arrives: recorded now; returns the flow-control item admission decides on. */
  arrive(arrival: Arrival): FlowItem {
    const request = arrival.request;
    const record = recordFor(request, arrival.atMs, this.o.objectives);
    this.records.push(record);
    this.waiting.set(request.id, { request, record, ctx: undefined, endpoint: undefined });
    return {
      id: request.id,
      fairnessId: record.fairnessId,
      priority: record.priority,
      bytes: request.inputTokens * 4,
      enqueuedAt: this.o.clock.now(),
      inputTokens: request.inputTokens,
      ...(request.sessionId ? { sessionId: request.sessionId } : {}),
    };
  }

  /** Admission dropped a waiting request with `outcome` (its llm-d reason). */
  drop(id: string, outcome: string): void {
    const live = this.waiting.get(id);
    if (!live) return;
    this.waiting.delete(id);
    this.endWithError(live.record, outcome);
    this.settle(live, outcome);
  }

  /**
   * Schedules an admitted request; undefined when the scheduler rejected it (recorded as failed).
   * Returns a promise only when a producer is asynchronous (built-ins are not), so the event loop
   * stays synchronous.
   */
  dispatch(
    id: string,
    queuedMs: number,
    endpoints: readonly Endpoint[],
  ): Dispatched | undefined | Promise<Dispatched | undefined> {
    const live = this.waiting.get(id)!;
    this.waiting.delete(id);
    live.record.queuedMs = queuedMs;
    const tokens = this.o.prompts.tokens(live.request.segments);
    const ctx: SchedulingContext = {
      request: this.schedulingRequest(live.request, live.record, tokens),
      state: new Map(),
      clock: this.o.clock,
    };
    live.ctx = ctx;
    const pending = this.o.scheduler.prepare(ctx, endpoints);
    if (pending) return pending.then(() => this.decide(live, ctx, endpoints));
    return this.decide(live, ctx, endpoints);
  }

  private decide(live: Live, ctx: SchedulingContext, endpoints: readonly Endpoint[]): Dispatched | undefined {
    const { request, record } = live;
    const result = this.o.scheduler.schedule(ctx, endpoints);
    const endpoint =
      result instanceof LlmdError
        ? undefined
        : result.profileResults.get(result.primaryProfileName)?.targetEndpoints[0];
    if (result instanceof LlmdError || !endpoint) {
      this.endWithError(record, result instanceof LlmdError ? result.code : "no-endpoint");
      this.settle(live, `failed-${record.error}`);
      return undefined;
    }
    this.o.scheduler.preRequest(ctx, result);
    live.endpoint = endpoint;
    record.endpoint = endpointIndex(endpoint, endpoints);
    this.lives.set(request.id, live);
    return {
      endpoint,
      engineRequest: {
        id: request.id,
        promptTokens: ctx.request.tokens!,
        maxTokens: request.outputTokens,
        // llm-d: higher priority = more important; vLLM's engine serves lower values first.
        priority: -record.priority,
      },
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
    this.endWithError(live.record, reason);
    this.finish(live, "error", `failed-${reason}`);
  }

  /** Flow control evicted a running request (the host aborted it in its engine). */
  evict(id: string): void {
    const live = this.lives.get(id);
    if (!live) return;
    this.endWithError(live.record, "evicted");
    this.finish(live, "evicted", "evicted");
  }

  /** Endpoint index of a running request (-1 when not running). */
  endpointOf(id: string): number {
    return this.lives.get(id)?.record.endpoint ?? -1;
  }

  /** Token usage of an ended request for flow-control accounting (undefined unless served). */
  usage(id: string): ResponseUsage | undefined {
    const r = this.ended.get(id)?.record;
    if (r?.outcome !== "served") return undefined;
    return { promptTokens: r.inputTokens, completionTokens: r.outputTokens, cachedTokens: r.cachedTokens };
  }

  /** End of run: requests still running are marked `unfinished` (none should be). */
  closeUnfinished(): void {
    for (const live of this.lives.values()) this.settle(live, "unfinished");
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
      this.o.scheduler.firstToken(live.ctx!, endpoint);
    }
    if (!output.finished) return false;
    record.endMs = nowMs - this.o.originMs;
    record.outputTokens = output.generated;
    this.finish(live, "natural", "served");
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

  private finish(live: Live, cause: TerminationCause, outcome: string): void {
    this.lives.delete(live.record.id);
    this.settle(live, outcome);
    this.o.scheduler.complete(live.ctx!, live.endpoint!, cause, this.usage(live.record.id));
  }

  /** Stamps an unserved request's error and its end at the current clock time. */
  private endWithError(record: RequestRecord, error: string): void {
    record.error = error;
    record.endMs = this.o.clock.now() - this.o.originMs;
  }

  /** Gives a request its one final outcome; a second one is a simulator bug. */
  private settle(live: Live, outcome: string): void {
    if (live.record.outcome !== undefined)
      throw new Error(`request ${live.record.id} ended twice (${live.record.outcome}, then ${outcome})`);
    live.record.outcome = outcome;
    this.ended.set(live.record.id, live);
  }

  private schedulingRequest(
    request: WorkloadRequest,
    record: RequestRecord,
    tokens: Uint32Array,
  ): SchedulingRequest {
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
      priority: record.priority,
      fairnessId: record.fairnessId,
      attributes: new Map(),
    };
  }
}

function endpointIndex(endpoint: Endpoint, endpoints: readonly Endpoint[]): number {
  return endpoints.indexOf(endpoint);
}
