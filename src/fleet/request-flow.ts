/**
 * The fleet's host of the request lifecycle (src/lifecycle): each workload request becomes the
 * `SchedulingRequest` the router would parse from what `llmd bench` sends (same headers, same body
 * size), then arrive (identity, admission) → place (producers, profiles, pre-request) → engine →
 * first token → complete (exactly once), plus the bookkeeping the metrics need (record,
 * ideal-cache hit, closed-loop follow-ups). Every arrival gets exactly one final outcome (served,
 * the dropped reason the client would see, `failed-<code>`, or `unfinished`).
 */
import { LlmdError } from "../api/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { EngineRequest, StepOutput } from "../engine/types.ts";
import type { FlowItem } from "../flow-control/types.ts";
import type { Screening } from "../lifecycle/admission.ts";
import type { RequestLifecycle } from "../lifecycle/lifecycle.ts";
import type { Placement } from "../lifecycle/placement.ts";
import type { IdealPrefixCache } from "../measure/ideal-cache.ts";
import { type RequestRecord, recordFor } from "../measure/records.ts";
import { PREFILLER_HEADER } from "../disagg/headers.ts";
import {
  PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE,
  STAGED_PREFILL_STATE_KEY,
  type StagedPrefill,
  UPSTREAM_HEADERS_STATE_KEY,
} from "../scheduler/framework/data-keys.ts";
import type { ResponseUsage, SchedulingRequest, TerminationCause } from "../scheduler/framework/types.ts";
import { type ClientIdentity, completionBodyBytes, requestHeaders } from "../workload/client-wire.ts";
import type { SyntheticPromptBuilder } from "../workload/synthetic-prompt.ts";
import type { Arrival, Workload, WorkloadRequest } from "../workload/types.ts";

/** Dependencies of the flow. */
export interface RequestFlowOptions {
  /**
   * One lifecycle per router replica (each with its own scheduler state and flow control); requests
   * are spread over them in turn, as by a load balancer without affinity.
   */
  lifecycles: readonly RequestLifecycle[];
  clock: Clock;
  prompts: SyntheticPromptBuilder;
  ideal: IdealPrefixCache;
  model: string;
  /** Clock time of workload time 0, ms. */
  originMs: number;
  /** How the workload's clients present themselves (API keys, TTFT targets). */
  clients?: ClientIdentity;
  /**
   * The clients chain their agents' turns with the Responses API (`WorkloadRequest.chainId`). As
   * the live router does, a router that did not serve a chain's last turn itself (another replica
   * did) learns that turn's endpoint from the shared store and tells the scheduler.
   */
  chains?: boolean;
}

/** A request that reached an endpoint decision. */
export interface Dispatched {
  endpoint: Endpoint;
  engineRequest: EngineRequest;
  /** The P/D prefill endpoint the scheduler named (`x-prefiller-host-port`, first entry), if any. */
  prefillHostPort: string | undefined;
  /** The `staged-prefill` plan's cuts, if the scheduler planned stages. */
  stages: readonly number[] | undefined;
}

interface Live {
  /** Index of the router replica that handles it. */
  router: number;
  workload: WorkloadRequest;
  request: SchedulingRequest;
  record: RequestRecord;
  placement: Placement | undefined;
}

/** The outcome a client sees for an error answer: the dropped reason, else `failed-<code>`. */
function outcomeOf(error: LlmdError): string {
  return error.droppedReason ?? `failed-${error.code}`;
}

/** Tracks every request from arrival to its follow-ups. */
export class RequestFlow {
  readonly records: RequestRecord[] = [];
  private readonly waiting = new Map<string, Live>();
  private readonly lives = new Map<string, Live>();
  private readonly ended = new Map<string, Live>();
  /** Chain id → the router and endpoint of its last turn (with `chains`). */
  private readonly chainEnds = new Map<string, { router: number; endpointKey: string }>();
  private arrivals = 0;
  /** Router replica by request id, while admission may still hear of the request (more than one router). */
  private readonly routers = new Map<string, number>();

  constructor(private readonly o: RequestFlowOptions) {}

  /** Requests arrived and not yet ended (waiting in admission or running). */
  get live(): number {
    return this.lives.size + this.waiting.size;
  }

  /**
   * A request arrives: recorded now, identified and screened against `endpoints`. `pass` and
   * `queue` leave it waiting for {@link dispatch} (via flow control for `queue`); an error answers it.
   */
  arrive(arrival: Arrival, endpoints: readonly Endpoint[]): Screening {
    const workload = arrival.request;
    const record = recordFor(workload, arrival.atMs, {});
    this.records.push(record);
    const router = this.arrivals++ % this.o.lifecycles.length;
    if (router > 0) this.routers.set(workload.id, router);
    const request = this.schedulingRequest(workload);
    const live: Live = { router, workload, request, record, placement: undefined };
    const previous = workload.chainId && this.chainEnds.get(workload.chainId);
    if (previous && previous.router !== router)
      request.attributes.set(PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE, previous.endpointKey);
    const screening = this.lifecycleOf(live).arrive(request, endpoints);
    record.priority = live.request.priority;
    record.fairnessId = live.request.fairnessId;
    if (screening instanceof LlmdError) {
      this.endWithError(record, screening.code);
      this.settle(live, outcomeOf(screening));
    } else this.waiting.set(workload.id, live);
    return screening;
  }

  /** The flow-control item of a request that screened `queue`. */
  flowItem(id: string): FlowItem {
    const live = this.waiting.get(id)!;
    return this.lifecycleOf(live).flowItem(live.request);
  }

  /** The router replica of a request, until {@link forgetRouter} (0 when unknown). */
  routerOf(id: string): number {
    return this.routers.get(id) ?? 0;
  }

  /** Admission has learnt the request ended: its router is no longer needed. */
  forgetRouter(id: string): void {
    this.routers.delete(id);
  }

  private lifecycleOf(live: Live): RequestLifecycle {
    return this.o.lifecycles[live.router]!;
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
   * Schedules an admitted request; undefined when the scheduler answered it with an error
   * (recorded). Returns a promise only when a producer is asynchronous (built-ins are not), so the
   * event loop stays synchronous.
   */
  dispatch(
    id: string,
    queuedMs: number,
    endpoints: readonly Endpoint[],
  ): Dispatched | undefined | Promise<Dispatched | undefined> {
    const live = this.waiting.get(id)!;
    this.waiting.delete(id);
    live.record.queuedMs = queuedMs;
    live.request.tokens = this.o.prompts.tokens(live.workload.segments);
    const placed = this.lifecycleOf(live).place(live.request, endpoints);
    if (placed instanceof Promise) return placed.then((p) => this.decide(live, p, endpoints));
    return this.decide(live, placed, endpoints);
  }

  private decide(
    live: Live,
    placement: Placement | LlmdError,
    endpoints: readonly Endpoint[],
  ): Dispatched | undefined {
    const { workload, record } = live;
    if (placement instanceof LlmdError) {
      this.endWithError(record, placement.code);
      this.settle(live, outcomeOf(placement));
      return undefined;
    }
    live.placement = placement;
    record.endpoint = endpoints.indexOf(placement.target);
    const headers = placement.ctx.state.get(UPSTREAM_HEADERS_STATE_KEY) as
      | ReadonlyMap<string, string>
      | undefined;
    this.lives.set(workload.id, live);
    return {
      endpoint: placement.target,
      engineRequest: {
        id: workload.id,
        promptTokens: live.request.tokens!,
        maxTokens: workload.outputTokens,
        // llm-d: higher priority = more important; vLLM's engine serves lower values first.
        priority: -record.priority,
      },
      prefillHostPort: headers?.get(PREFILLER_HEADER)?.split(",")[0],
      stages: (placement.ctx.state.get(STAGED_PREFILL_STATE_KEY) as StagedPrefill | undefined)?.cuts,
    };
  }

  /** The engine accepted the request: it joins the admitted population of the ideal ceiling. */
  admitted(id: string): void {
    const live = this.lives.get(id)!;
    live.record.idealCachedTokens = this.o.ideal.lookupAndInsert(
      live.workload.segments,
      live.workload.inputTokens,
    );
  }

  /** The engine refused a dispatched request. */
  fail(id: string, reason: string): void {
    const live = this.lives.get(id);
    if (!live) return;
    this.endWithError(live.record, reason);
    this.finish(live, "error", `failed-${reason}`);
  }

  /**
   * A placed request lost its endpoint before its first token (the replica died): it goes back to
   * waiting for another placement, as the gateway retries a request whose upstream failed before
   * answering. False (nothing changes) once a token was sent: that stream is cut.
   */
  requeue(id: string): boolean {
    const live = this.lives.get(id);
    if (!live || !Number.isNaN(live.record.firstTokenMs)) return false;
    this.lives.delete(id);
    this.lifecycleOf(live).complete(live.placement!, "error", undefined);
    live.placement = undefined;
    live.record.endpoint = -1;
    this.waiting.set(id, live);
    return true;
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
  progress(output: StepOutput, stepStartMs: number, nowMs: number): boolean {
    const live = this.lives.get(output.id);
    if (!live) return false;
    const record = live.record;
    if (Number.isNaN(record.startMs)) record.startMs = stepStartMs - this.o.originMs;
    if (output.first) {
      record.firstTokenMs = nowMs - this.o.originMs;
      record.cachedTokens = output.cachedTokens;
      this.lifecycleOf(live).firstToken(live.placement!);
    }
    if (!output.finished) return false;
    record.endMs = nowMs - this.o.originMs;
    record.outputTokens = output.generated;
    if (this.o.chains && live.workload.chainId) {
      const endpointKey = live.placement!.target.metadata.key;
      this.chainEnds.set(live.workload.chainId, { router: live.router, endpointKey });
    }
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
    return workload.onComplete(live.workload, endMs, ok);
  }

  private finish(live: Live, cause: TerminationCause, outcome: string): void {
    this.lives.delete(live.record.id);
    this.settle(live, outcome);
    this.lifecycleOf(live).complete(live.placement!, cause, this.usage(live.record.id));
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

  /** What the router would parse from the request `llmd bench` sends for `request`. */
  private schedulingRequest(request: WorkloadRequest): SchedulingRequest {
    const { prompts, model, clients } = this.o;
    let text: string | undefined;
    return {
      requestId: request.id,
      model,
      path: "/v1/completions",
      headers: requestHeaders(request, clients),
      // Materialised only if a plugin reads it: the tokens carry the same content.
      get promptText() {
        text ??= prompts.text(request.segments);
        return text;
      },
      body: { model, max_tokens: request.outputTokens, stream: true },
      bodyBytes: completionBodyBytes(model, prompts.chars(request.segments), request.outputTokens),
      inputTokens: request.inputTokens,
      // The tokens set at dispatch are the ids the engine runs.
      exactTokens: true,
      priority: 0,
      fairnessId: "",
      attributes: new Map(),
    };
  }
}
