/**
 * The fleet simulator: N engines behind the real scheduler on one virtual clock, driven by a
 * workload, with no HTTP. Events are arrivals, engine step ends (one per batch step, never per
 * token; an idle engine schedules nothing) and per-replica scrapes. The router's view is
 * reproduced as in production: scraped metrics (stale between scrapes), dispatchedSinceScrape,
 * the producers' own state (e.g. the optimistic prefix index written in preRequest) and in-flight
 * accounting through firstToken/complete. Every request runs the same lifecycle as in the gateway
 * (src/lifecycle: identity, admission, placement, completion); flow control's queue is hosted on
 * the virtual clock by a {@link VirtualFlowHost}. Deterministic for given inputs.
 */
import type { ManualClock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { Engine, EngineRequest, StepOutput, StepResult } from "../engine/types.ts";
import type { ResponseUsage } from "../scheduler/framework/types.ts";
import { IdealPrefixCache } from "../measure/ideal-cache.ts";
import { LoadTimeline } from "../measure/records.ts";
import { StagedPrefills } from "./staged-prefill.ts";
import type { SyntheticPromptBuilder } from "../workload/synthetic-prompt.ts";
import type { Arrival, Workload } from "../workload/types.ts";
import { VirtualFlowHost, type VirtualFlowStep } from "../flow-control/host/virtual.ts";
import type { FlowExit } from "../flow-control/types.ts";
import type { RequestLifecycle } from "../lifecycle/lifecycle.ts";
import type { ClientIdentity } from "../workload/client-wire.ts";
import type { KvEventConsumer } from "../scheduler/framework/hosted.ts";
import { type PdOptions, PdCoordinator, type PdStats } from "./disaggregation.ts";
import { EventQueue } from "./event-queue.ts";
import { type KvDelivery, KvEventFeed, type KvFeedStats } from "./kv-event-feed.ts";
import { Replica } from "./replica.ts";
import { type Dispatched, RequestFlow } from "./request-flow.ts";
import type { RequestRecord } from "../measure/records.ts";

const NONE: readonly FlowExit[] = Object.freeze([]);
/** A step with nothing to do. */
const IDLE: VirtualFlowStep = Object.freeze({
  dispatched: NONE,
  dropped: NONE,
  evicted: NONE,
  blocked: false,
  wakeAt: undefined,
});

/** Why requests in flight on a replica that died fail. */
const REPLICA_DIED = "replica_died";

/** Virtual clock time of workload time 0 (the clock's 0 means "never scraped" to plugins). */
export const CLOCK_ORIGIN_MS = 1000;

/** What a run needs. */
export interface FleetOptions {
  replicas: number;
  createEngine(index: number): Engine;
  /** Builds router replica `router`'s request lifecycle over the fleet's endpoints (the router config's). */
  createLifecycle(endpoints: () => readonly Endpoint[], router: number): RequestLifecycle;
  /** Router replicas behind a load balancer without affinity, each with its own state (default 1). */
  routers?: number;
  /** How the workload's clients present themselves (API keys, TTFT targets). */
  clients?: ClientIdentity;
  /** The clients chain their agents' turns with the Responses API (see RequestFlowOptions). */
  chains?: boolean;
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
  /**
   * The router's KV-event consumers (precise prefix plugins of every router replica) and the
   * publisher → router delay, ms; without consumers the engines emit no events.
   */
  kvEvents?: { consumers: readonly KvEventConsumer[]; delayMs: number };
  /** Called about every `progressEveryMs` of virtual time. */
  onProgress?(simulatedMs: number): void;
  progressEveryMs?: number;
  /** Endpoint labels of replica `index` (e.g. `llm-d.ai/role`); none by default. */
  labels?(index: number): Readonly<Record<string, string>>;
  /** Runs the two legs of requests the scheduler names a prefill endpoint for (src/fleet/disaggregation.ts). */
  pd?: PdOptions;
  /**
   * Replica deaths: every `everyMs` of virtual time until `durationMs` a replica drawn by `random`
   * dies and restarts at once with a fresh engine; the requests it served fail with `replica_died`.
   */
  deaths?: { everyMs: number; random: () => number };
}

/** What a run produced. */
export interface FleetResult {
  /** One per arrival, each with exactly one outcome. */
  records: RequestRecord[];
  timeline: LoadTimeline;
  preemptions: number;
  /** Workload time when the run stopped, ms. */
  simulatedMs: number;
  wallMs: number;
  events: number;
  steps: number;
  /** What the P/D requests did (with `pd`). */
  pd: PdStats | undefined;
  /**
   * Replica deaths injected; the requests they cut after their first token (`failed-replica_died`)
   * and those placed again because they had not answered yet.
   */
  deaths: number;
  killedRequests: number;
  retriedRequests: number;
  /** GPU blocks still referenced in any engine at the end (held for a transfer or by a request). */
  blocksInUseAtEnd: number;
  /** KV events delivered to the router, when it consumes them; staleness percentiles in ms. */
  kvEvents?: KvFeedStats & { stalenessP50Ms: number; stalenessP99Ms: number };
}

type SimEvent =
  | { at: number; seq: number; kind: "arrival"; arrival: Arrival; open: boolean }
  | { at: number; seq: number; kind: "step"; replica: Replica; step: StepResult; epoch: number }
  | { at: number; seq: number; kind: "call"; fn: () => void }
  | { at: number; seq: number; kind: "death" }
  | { at: number; seq: number; kind: "scrape"; replica: Replica }
  | { at: number; seq: number; kind: "flow-wake" }
  | { at: number; seq: number; kind: "kv-events"; delivery: KvDelivery }
  | { at: number; seq: number; kind: "progress" };

/** Runs one simulation to completion. */
export async function runFleet(options: FleetOptions): Promise<FleetResult> {
  return new FleetSimulator(options).run();
}

class FleetSimulator {
  private readonly queue = new EventQueue<SimEvent>();
  private readonly replicas: Replica[] = [];
  private readonly byEndpoint = new Map<Endpoint, Replica>();
  private readonly byHostPort = new Map<string, Replica>();
  private readonly pd: PdCoordinator | undefined;
  private readonly staged = new StagedPrefills({
    add: (replica, request) => {
      const rejection = replica.engine.add(request, this.o.clock.now());
      if (!rejection) this.kick(replica);
      return rejection;
    },
    fail: (id, reason) => this.failRunning(id, reason),
  });
  private deaths = 0;
  private killedRequests = 0;
  private retriedRequests = 0;
  private readonly endpoints: Endpoint[] = [];
  private readonly timeline: LoadTimeline;
  private readonly flow: RequestFlow;
  private readonly kvFeed: KvEventFeed | undefined;
  /** Each router replica's flow-control queue on the virtual clock (none without the `flowControl` gate). */
  private readonly flowHosts: (VirtualFlowHost | undefined)[];
  /** Time of the one pending `flow-wake` event (others in the queue are stale). */
  private wakeAt: number | undefined;
  private steps = 0;
  private events = 0;

  constructor(private readonly o: FleetOptions) {
    this.timeline = new LoadTimeline(o.loadBucketMs, o.replicas);
    for (let i = 0; i < o.replicas; i++) {
      const replica = new Replica(i, o.createEngine(i), o.model, o.labels?.(i));
      this.replicas.push(replica);
      this.byEndpoint.set(replica.endpoint, replica);
      this.byHostPort.set(replica.hostPort, replica);
      this.endpoints.push(replica.endpoint);
    }
    const kv = o.kvEvents;
    const queueDelivery = (delivery: KvDelivery) =>
      this.queue.push({ at: delivery.deliverAtMs, seq: 0, kind: "kv-events", delivery });
    this.kvFeed = kv?.consumers.length
      ? new KvEventFeed(kv.consumers, kv.delayMs, o.model, o.clock, queueDelivery)
      : undefined;
    for (const replica of this.replicas) this.kvFeed?.attach(replica);
    const endpoints = () => this.endpoints;
    const lifecycles = Array.from({ length: o.routers ?? 1 }, (_, r) => o.createLifecycle(endpoints, r));
    this.flow = new RequestFlow({
      lifecycles,
      clock: o.clock,
      prompts: o.prompts,
      ideal: new IdealPrefixCache(o.blockTokens),
      model: o.model,
      originMs: CLOCK_ORIGIN_MS,
      ...(o.clients ? { clients: o.clients } : {}),
      ...(o.chains ? { chains: true } : {}),
    });
    this.pd = o.pd && new PdCoordinator(o.pd, this.pdHost());
    this.flowHosts = lifecycles.map((l) => {
      const runtime = l.admission.flowControl;
      return runtime && new VirtualFlowHost({ runtime, endpoints });
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
    if (o.deaths) this.queue.push({ at: CLOCK_ORIGIN_MS + o.deaths.everyMs, seq: 0, kind: "death" });
    const endAt = CLOCK_ORIGIN_MS + o.durationMs;
    for (let event = this.queue.pop(); event; event = this.queue.pop()) {
      const settled = this.flow.live === 0 && !this.pd?.busy;
      if (event.at >= endAt && (settled || event.at >= endAt + o.drainMs)) break;
      o.clock.set(event.at);
      this.events++;
      const pending = this.handle(event);
      if (pending) await pending;
    }
    for (const host of this.flowHosts) if (host) await this.apply(host.shutdown(o.clock.now()));
    this.flow.closeUnfinished();
    return {
      records: this.flow.records,
      timeline: this.timeline,
      preemptions: this.replicas.reduce((sum, r) => sum + r.engine.stats().preemptions, 0),
      simulatedMs: o.clock.now() - CLOCK_ORIGIN_MS,
      wallMs: performance.now() - started,
      events: this.events,
      steps: this.steps,
      pd: this.pd?.stats,
      deaths: this.deaths,
      killedRequests: this.killedRequests,
      retriedRequests: this.retriedRequests,
      blocksInUseAtEnd: this.replicas.reduce((sum, r) => sum + r.engine.stats().usedBlocks, 0),
      ...(this.kvFeed ? { kvEvents: this.kvFeedReport(this.kvFeed) } : {}),
    };
  }

  private kvFeedReport(feed: KvEventFeed): FleetResult["kvEvents"] {
    return {
      ...feed.stats,
      stalenessP50Ms: feed.stalenessPercentile(50),
      stalenessP99Ms: feed.stalenessPercentile(99),
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
        if (event.epoch !== event.replica.epoch) return;
        return this.stepEnded(event.replica, event.step, event.at);
      case "call":
        return event.fn();
      case "death":
        return this.die(event.at);
      case "scrape":
        event.replica.scrape(event.at);
        this.queue.push({
          at: event.at + this.o.scrapeIntervalMs,
          seq: 0,
          kind: "scrape",
          replica: event.replica,
        });
        return this.everyHost((host) => host.saturationChanged(event.at));
      case "flow-wake":
        if (event.at !== this.wakeAt) return;
        this.wakeAt = undefined;
        return this.everyHost((host) => host.wake(event.at));
      case "kv-events":
        this.kvFeed!.deliver(event.delivery);
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
    const id = arrival.request.id;
    const screening = this.flow.arrive(arrival, this.endpoints);
    if (screening === "queue")
      return this.apply(this.hostOf(id)!.enqueue(this.flow.flowItem(id), this.o.clock.now()));
    if (screening !== "pass") {
      this.flow.forgetRouter(id);
      return this.followUps(id);
    }
    const exit: FlowExit = { item: this.flow.flowItem(id), outcome: "dispatched", queuedMs: 0 };
    return this.apply({ ...IDLE, dispatched: [exit] });
  }

  /**
   * Carries out admission's answers: drops, evictions, and dispatches (each placement may release
   * the next). Synchronous unless an asynchronous producer ran.
   */
  private apply(first: VirtualFlowStep): void | Promise<void> {
    return this.applyStack([first]);
  }

  /** Works the stack of steps empty; after an asynchronous dispatch, resumes where it left off. */
  private applyStack(steps: VirtualFlowStep[]): void | Promise<void> {
    for (let step = steps.pop(); step; step = steps.pop()) {
      for (const exit of step.dropped) this.drop(exit);
      for (const exit of step.evicted) steps.push(this.evict(exit.item.id));
      for (let i = 0; i < step.dispatched.length; i++) {
        const exit = step.dispatched[i]!;
        const dispatched = this.flow.dispatch(exit.item.id, exit.queuedMs, this.endpoints);
        if (dispatched instanceof Promise) {
          const rest = { ...step, dropped: [], evicted: [], dispatched: step.dispatched.slice(i + 1) };
          // The rest of this step on top: the same order as the synchronous path.
          return dispatched.then((d) => {
            steps.push(this.place(exit, d), rest);
            return this.applyStack(steps);
          });
        }
        steps.push(this.place(exit, dispatched));
      }
      this.armWake(step.wakeAt);
    }
  }

  private armWake(at: number | undefined): void {
    if (at === undefined || (this.wakeAt !== undefined && this.wakeAt <= at)) return;
    this.wakeAt = Math.max(at, this.o.clock.now());
    this.queue.push({ at: this.wakeAt, seq: 0, kind: "flow-wake" });
  }

  private drop(exit: FlowExit): void {
    this.flow.drop(exit.item.id, exit.outcome);
    this.flow.forgetRouter(exit.item.id);
    this.followUps(exit.item.id);
  }

  /** Aborts an evicted request in its engine; admission learns it completed. */
  private evict(id: string): VirtualFlowStep {
    const replica = this.replicas[this.flow.endpointOf(id)];
    replica?.inFlight.delete(id);
    if (this.staged.abort(id) || replica?.engine.abort(id)) replica?.touched();
    this.flow.evict(id);
    this.followUps(id);
    return this.completed(id, undefined);
  }

  /** Hands a scheduled request to its engine; returns admission's answer to it. */
  private place(exit: FlowExit, dispatched: Dispatched | undefined): VirtualFlowStep {
    const id = exit.item.id;
    const now = this.o.clock.now();
    if (!dispatched) {
      this.followUps(id);
      return this.completed(id, undefined);
    }
    const replica = this.byEndpoint.get(dispatched.endpoint)!;
    replica.dispatched();
    const prefill = this.pd && dispatched.prefillHostPort && this.byHostPort.get(dispatched.prefillHostPort);
    if (prefill) {
      this.flow.admitted(id);
      const answer = this.hostOf(id)?.placed(id, now, dispatched.endpoint.metadata.key) ?? IDLE;
      this.pd!.start(id, dispatched.engineRequest, prefill, replica);
      return answer;
    }
    const rejection = dispatched.stages
      ? this.staged.start(replica, dispatched.engineRequest, dispatched.stages)
      : replica.engine.add(dispatched.engineRequest, now);
    if (rejection) {
      this.flow.fail(id, rejection.reason);
      this.followUps(id);
      return this.completed(id, undefined);
    }
    replica.inFlight.add(id);
    this.flow.admitted(id);
    this.kick(replica);
    return this.hostOf(id)?.placed(id, now, dispatched.endpoint.metadata.key) ?? IDLE;
  }

  /** How the P/D coordinator reaches the fleet. */
  private pdHost() {
    return {
      now: () => this.o.clock.now(),
      at: (at: number, fn: () => void) => this.queue.push({ at, seq: 0, kind: "call", fn }),
      kick: (replica: Replica) => this.kick(replica),
      startDecode: (id: string, replica: Replica, request: EngineRequest) =>
        this.startDecode(id, replica, request),
      fail: (id: string, reason: string) => this.failRunning(id, reason),
    };
  }

  /** A P/D request's decode leg joins its decode replica's engine. */
  private startDecode(id: string, replica: Replica, request: EngineRequest): void {
    const rejection = replica.engine.add(request, this.o.clock.now());
    if (rejection) {
      this.failRunning(id, rejection.reason);
      return;
    }
    replica.inFlight.add(id);
    this.kick(replica);
  }

  /** Ends a running request with `failed-<reason>`; admission learns it completed. */
  private failRunning(id: string, reason: string): void {
    if (this.flow.endpointOf(id) < 0) return;
    if (reason === REPLICA_DIED && this.retry(id)) return;
    if (reason === REPLICA_DIED) this.killedRequests++;
    this.flow.fail(id, reason);
    this.followUps(id);
    void this.apply(this.completed(id, undefined));
  }

  /**
   * Places again a request whose replica died before its first token, as the gateway retries an
   * upstream that failed before answering (not under flow control, whose queue would count it
   * twice); true when it did.
   */
  private retry(id: string): boolean {
    if (this.hostOf(id) || !this.flow.requeue(id)) return false;
    this.retriedRequests++;
    const exit: FlowExit = { item: this.flow.flowItem(id), outcome: "dispatched", queuedMs: 0 };
    void this.apply({ ...IDLE, dispatched: [exit] });
    return true;
  }

  /** A replica drawn at random dies and restarts with a fresh engine. */
  private die(at: number): void {
    const deaths = this.o.deaths!;
    if (at >= CLOCK_ORIGIN_MS + this.o.durationMs) return;
    this.queue.push({ at: at + deaths.everyMs, seq: 0, kind: "death" });
    const replica = this.replicas[Math.floor(deaths.random() * this.replicas.length)]!;
    this.deaths++;
    this.staged.replicaDied(replica);
    for (const id of replica.restart(this.o.createEngine(replica.index))) this.failRunning(id, REPLICA_DIED);
    this.kvFeed?.attach(replica);
    this.pd?.replicaDied(replica);
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
    this.queue.push({ at: now + step.durationMs, seq: 0, kind: "step", replica, step, epoch: replica.epoch });
  }

  private stepEnded(replica: Replica, step: StepResult, now: number): void | Promise<void> {
    replica.stepping = false;
    this.timeline.add(replica.index, step.startMs - CLOCK_ORIGIN_MS, step.prefillTokens);
    let pending: Promise<void> | undefined;
    for (const output of step.outputs) {
      if (this.staged.owns(output.id)) {
        this.staged.stageOutput(output);
        continue;
      }
      if (this.pd?.owns(output.id)) {
        this.pd.prefillOutput(output);
        continue;
      }
      if (!this.flow.progress(this.reported(output), step.startMs, now)) continue;
      replica.inFlight.delete(output.id);
      this.followUps(output.id);
      const answer = this.completed(output.id, this.flow.usage(output.id));
      pending = pending ? pending.then(() => this.apply(answer)) : (this.apply(answer) ?? undefined);
    }
    this.kick(replica);
    return pending;
  }

  /** A P/D request's first token reports the prefill's cached tokens, as the sidecar rewrites them. */
  private reported(output: StepOutput): StepOutput {
    if (!output.first) return output;
    let cachedTokens = this.staged.reportedCached(output.id, output.cachedTokens);
    if (this.pd) cachedTokens = this.pd.reportedCached(output.id, cachedTokens);
    return cachedTokens === output.cachedTokens ? output : { ...output, cachedTokens };
  }

  /** Flow control learns a dispatched request ended; its answer may dispatch more. */
  private completed(id: string, usage: ResponseUsage | undefined): VirtualFlowStep {
    const host = this.hostOf(id);
    this.flow.forgetRouter(id);
    return host?.completed(id, usage, this.o.clock.now()) ?? IDLE;
  }

  /** The flow-control host of the router replica handling request `id`. */
  private hostOf(id: string): VirtualFlowHost | undefined {
    return this.flowHosts[this.flow.routerOf(id)];
  }

  /** Carries out every router replica's answer to one event, in turn. */
  private everyHost(event: (host: VirtualFlowHost) => VirtualFlowStep): void | Promise<void> {
    let pending: Promise<void> | undefined;
    for (const host of this.flowHosts) {
      if (!host) continue;
      const answer = () => this.apply(event(host));
      pending = pending ? pending.then(answer) : (answer() ?? undefined);
    }
    return pending;
  }

  private followUps(requestId: string): void {
    for (const arrival of this.flow.takeFollowUps(requestId, this.o.workload)) {
      this.queue.push({ at: CLOCK_ORIGIN_MS + arrival.atMs, seq: 0, kind: "arrival", arrival, open: false });
    }
  }
}
