/**
 * The fleet simulator: N engines behind the real scheduler on one virtual clock, driven by a
 * workload, with no HTTP. Events are arrivals, engine step ends (one per batch step, never per
 * token; an idle engine schedules nothing) and per-replica scrapes. The router's view is
 * reproduced as in production: scraped metrics (stale between scrapes), dispatchedSinceScrape,
 * the producers' own state (e.g. the optimistic prefix index written in preRequest) and in-flight
 * accounting through firstToken/complete. Deterministic for given inputs.
 */
import type { ManualClock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { Engine, StepResult } from "../engine/types.ts";
import type { RequestScheduler } from "../scheduler/framework/types.ts";
import { IdealPrefixCache } from "../bench/metrics/ideal-cache.ts";
import { LoadTimeline, type RequestRecord } from "../bench/metrics/records.ts";
import type { SyntheticPromptBuilder } from "../bench/workloads/synthetic-prompt.ts";
import type { Arrival, Workload } from "../bench/workloads/types.ts";
import { EventQueue } from "./event-queue.ts";
import { Replica } from "./replica.ts";
import { type Dispatched, RequestFlow } from "./request-flow.ts";

/** Virtual clock time of workload time 0 (the clock's 0 means "never scraped" to plugins). */
export const CLOCK_ORIGIN_MS = 1000;

/** What a run needs. */
export interface FleetOptions {
  replicas: number;
  createEngine(index: number): Engine;
  scheduler: RequestScheduler;
  /** Shared with the scheduler's plugins; must read CLOCK_ORIGIN_MS or less at start. */
  clock: ManualClock;
  workload: Workload;
  prompts: SyntheticPromptBuilder;
  model: string;
  /** Arrivals at or after this workload time are dropped, ms. */
  durationMs: number;
  /** After `durationMs`, in-flight requests get this long to finish, ms. */
  drainMs: number;
  scrapeIntervalMs: number;
  /** Engine block size in tokens (the ideal ceiling's granularity). */
  blockTokens: number;
  /** Width of the per-endpoint load timeline buckets, ms. */
  loadBucketMs: number;
  /** Called about every `progressEveryMs` of virtual time. */
  onProgress?(simulatedMs: number): void;
  progressEveryMs?: number;
}

/** What a run produced. */
export interface FleetResult {
  records: RequestRecord[];
  timeline: LoadTimeline;
  preemptions: number;
  /** Workload time when the run stopped, ms. */
  simulatedMs: number;
  wallMs: number;
  events: number;
  steps: number;
}

type SimEvent =
  | { at: number; seq: number; kind: "arrival"; arrival: Arrival; open: boolean }
  | { at: number; seq: number; kind: "step"; replica: Replica; step: StepResult }
  | { at: number; seq: number; kind: "scrape"; replica: Replica }
  | { at: number; seq: number; kind: "progress" };

/** Runs one simulation to completion. */
export async function runFleet(options: FleetOptions): Promise<FleetResult> {
  return new FleetSimulator(options).run();
}

class FleetSimulator {
  private readonly queue = new EventQueue<SimEvent>();
  private readonly replicas: Replica[] = [];
  private readonly byEndpoint = new Map<Endpoint, Replica>();
  private readonly endpoints: Endpoint[] = [];
  private readonly timeline: LoadTimeline;
  private readonly flow: RequestFlow;
  private steps = 0;
  private events = 0;

  constructor(private readonly o: FleetOptions) {
    this.timeline = new LoadTimeline(o.loadBucketMs, o.replicas);
    for (let i = 0; i < o.replicas; i++) {
      const replica = new Replica(i, o.createEngine(i), o.model);
      this.replicas.push(replica);
      this.byEndpoint.set(replica.endpoint, replica);
      this.endpoints.push(replica.endpoint);
    }
    this.flow = new RequestFlow({
      scheduler: o.scheduler,
      clock: o.clock,
      prompts: o.prompts,
      ideal: new IdealPrefixCache(o.blockTokens),
      model: o.model,
      originMs: CLOCK_ORIGIN_MS,
    });
  }

  async run(): Promise<FleetResult> {
    const started = performance.now();
    const o = this.o;
    o.clock.set(CLOCK_ORIGIN_MS);
    for (const replica of this.replicas) {
      replica.scrape(CLOCK_ORIGIN_MS);
      const phase = (o.scrapeIntervalMs * (replica.index + 1)) / this.replicas.length;
      this.queue.push({ at: CLOCK_ORIGIN_MS + phase, seq: 0, kind: "scrape", replica });
    }
    this.pullArrival();
    if (o.onProgress) this.queue.push({ at: CLOCK_ORIGIN_MS, seq: 0, kind: "progress" });
    const endAt = CLOCK_ORIGIN_MS + o.durationMs;
    for (let event = this.queue.pop(); event; event = this.queue.pop()) {
      if (event.at >= endAt && (this.flow.live === 0 || event.at >= endAt + o.drainMs)) break;
      o.clock.set(event.at);
      this.events++;
      const pending = this.handle(event);
      if (pending) await pending;
    }
    return {
      records: this.flow.records,
      timeline: this.timeline,
      preemptions: this.replicas.reduce((sum, r) => sum + r.engine.stats().preemptions, 0),
      simulatedMs: o.clock.now() - CLOCK_ORIGIN_MS,
      wallMs: performance.now() - started,
      events: this.events,
      steps: this.steps,
    };
  }

  /** Handles one event; a promise only when an asynchronous producer ran. */
  private handle(event: SimEvent): void | Promise<void> {
    switch (event.kind) {
      case "arrival":
        if (event.open) this.pullArrival();
        if (event.arrival.atMs < this.o.durationMs) return this.arrive(event.arrival);
        return;
      case "step":
        return this.stepEnded(event.replica, event.step, event.at);
      case "scrape":
        event.replica.scrape(event.at);
        this.queue.push({
          at: event.at + this.o.scrapeIntervalMs,
          seq: 0,
          kind: "scrape",
          replica: event.replica,
        });
        return;
      case "progress":
        this.o.onProgress?.(event.at - CLOCK_ORIGIN_MS);
        this.queue.push({ at: event.at + (this.o.progressEveryMs ?? 10_000), seq: 0, kind: "progress" });
    }
  }

  /** Keeps exactly one open-loop arrival queued (traces can be long). */
  private pullArrival(): void {
    const next = this.o.workload.nextArrival();
    if (next)
      this.queue.push({
        at: CLOCK_ORIGIN_MS + next.atMs,
        seq: 0,
        kind: "arrival",
        arrival: next,
        open: true,
      });
  }

  private arrive(arrival: Arrival): void | Promise<void> {
    const dispatched = this.flow.dispatch(arrival, this.endpoints);
    if (dispatched instanceof Promise) return dispatched.then((d) => this.place(arrival, d));
    this.place(arrival, dispatched);
  }

  private place(arrival: Arrival, dispatched: Dispatched | undefined): void {
    if (!dispatched) return this.followUps(arrival.request.id);
    const replica = this.byEndpoint.get(dispatched.endpoint)!;
    replica.dispatched();
    const rejection = replica.engine.add(dispatched.engineRequest, this.o.clock.now());
    if (rejection) {
      this.flow.fail(dispatched.engineRequest.id, rejection.reason);
      return this.followUps(arrival.request.id);
    }
    this.flow.admitted(dispatched.engineRequest.id);
    this.kick(replica);
  }

  private kick(replica: Replica): void {
    if (replica.stepping) return;
    const now = this.o.clock.now();
    const step = replica.engine.step(now);
    replica.touched();
    if (!step) return;
    replica.stepping = true;
    this.steps++;
    this.queue.push({ at: now + step.durationMs, seq: 0, kind: "step", replica, step });
  }

  private stepEnded(replica: Replica, step: StepResult, now: number): void {
    replica.stepping = false;
    this.timeline.add(replica.index, step.startMs - CLOCK_ORIGIN_MS, step.prefillTokens);
    for (const output of step.outputs) {
      if (this.flow.progress(output, step.startMs, now, replica.endpoint)) this.followUps(output.id);
    }
    this.kick(replica);
  }

  private followUps(requestId: string): void {
    for (const arrival of this.flow.takeFollowUps(requestId, this.o.workload)) {
      this.queue.push({ at: CLOCK_ORIGIN_MS + arrival.atMs, seq: 0, kind: "arrival", arrival, open: false });
    }
  }
}
