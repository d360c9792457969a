/**
 * Admission, host-neutral: what happens to a request between identity and scheduling.
 * - A configured `probabilistic-admitter` (any admitter) screens sheddable requests first.
 * - With the `flowControl` feature gate, the request then queues in flow control: the host hands
 *   {@link AdmissionStage.flowItem} to its flow-control host (the gateway's `FlowGate`, the
 *   fleet's `VirtualFlowHost`), both driving the same `FlowController` built here.
 * - Without it, llm-d's legacy admission: a sheddable request (priority < 0) is shed with 429
 *   while the saturation detector reads ≥ 1; everything else passes at the cost of one comparison.
 */
import type { Registry } from "prom-client";
import { LlmdError } from "../api/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import {
  createFlowController,
  createSaturationDetector,
  type FlowControlRuntime,
} from "../flow-control/build.ts";
import { type FlowControlConfig, flowControlConfigSchema } from "../flow-control/config.ts";
import { FlowControlMetrics } from "../flow-control/metrics.ts";
import type { Admitter } from "../flow-control/policies/probabilistic-admitter.ts";
import type { FlowItem, SaturationDetector } from "../flow-control/types.ts";
import type { Plugin } from "../plugin/types.ts";
import { AGENT_IDENTITY_ATTRIBUTE } from "../scheduler/framework/data-keys.ts";
import type { SchedulingRequest, SessionTurns } from "../scheduler/framework/types.ts";
import { defaultTokenizer } from "../tokenizer/tokenizer.ts";

/** What admission decided at arrival: go on to scheduling, wait in flow control, or this answer. */
export type Screening = "pass" | "queue" | LlmdError;

/** Inputs of {@link createAdmissionStage}. */
export interface AdmissionStageOptions {
  /** `featureGates: [flowControl]`. */
  flowControlGate: boolean;
  /** The config's `flowControl` section (defaults when absent; its detector also drives legacy shedding). */
  flowControl: FlowControlConfig | undefined;
  /** Every configured plugin instance (refs and admitters resolve to them). */
  plugins: ReadonlyMap<string, Plugin>;
  clock: Clock;
  /** The pool's current candidates (flow-control gauges read them). */
  endpoints(): readonly Endpoint[];
  /** Where flow control exports `llm_d_epp_flow_control_*` (omit for none). */
  registry?: Registry;
  /** `inference_pool` label (default `default`). */
  poolName?: string;
}

/** The admission stage both hosts drive. */
export interface AdmissionStage {
  /** Flow control, when the gate is on: the host wraps it in its flow-control host. */
  readonly flowControl: FlowControlRuntime | undefined;
  /** Flow control's metrics, when a registry was given and the gate is on. */
  readonly metrics: FlowControlMetrics | undefined;
  /** Decides at arrival (after identity) against the model's candidate endpoints. */
  screen(request: SchedulingRequest, endpoints: readonly Endpoint[]): Screening;
  /** The flow-control item of a request arriving now. */
  flowItem(request: SchedulingRequest): FlowItem;
}

const shed = () => new LlmdError("shed", "sheddable request shed: the pool is saturated");

function isAdmitter(plugin: Plugin): plugin is Admitter {
  return typeof (plugin as Partial<Admitter>).admit === "function";
}

function isSessionTurns(plugin: Plugin): plugin is SessionTurns {
  return typeof (plugin as Partial<SessionTurns>).turnsTaken === "function";
}

/** Builds the stage; throws (a startup error) on an unresolvable flow-control ref. */
export function createAdmissionStage(options: AdmissionStageOptions): AdmissionStage {
  const config = options.flowControl ?? flowControlConfigSchema.parse({});
  const env = {
    clock: options.clock,
    tokenizer: defaultTokenizer,
    lookup: (name: string) => options.plugins.get(name),
  };
  const admitters = [...options.plugins.values()].filter(isAdmitter);
  const turns = [...options.plugins.values()].find(isSessionTurns);
  if (!options.flowControlGate) {
    return new Stage(
      options.clock,
      admitters,
      turns,
      createSaturationDetector(config, env),
      undefined,
      undefined,
    );
  }
  const metrics = options.registry
    ? new FlowControlMetrics({ registry: options.registry, poolName: options.poolName })
    : undefined;
  const runtime = createFlowController(config, env, metrics);
  metrics?.bind({
    stats: () => runtime.controller.stats(),
    saturation: () => runtime.detector.saturation(options.endpoints(), options.clock.now()),
    staleEndpoints: () => runtime.detector.staleEndpoints?.(options.endpoints(), options.clock.now()) ?? 0,
  });
  return new Stage(options.clock, admitters, turns, undefined, runtime, metrics);
}

class Stage implements AdmissionStage {
  constructor(
    private readonly clock: Clock,
    private readonly admitters: readonly Admitter[],
    /** Session turn counts for the flow-control item (`session-state-producer`), when configured. */
    private readonly turns: SessionTurns | undefined,
    /** Legacy shedding's detector; undefined when flow control queues. */
    private readonly legacy: SaturationDetector | undefined,
    readonly flowControl: FlowControlRuntime | undefined,
    readonly metrics: FlowControlMetrics | undefined,
  ) {}

  screen(request: SchedulingRequest, endpoints: readonly Endpoint[]): Screening {
    if (request.priority < 0) {
      const denial = this.admit(request, endpoints);
      if (denial) return denial;
    }
    if (this.flowControl) return "queue";
    if (request.priority >= 0 || !this.legacy) return "pass";
    return this.legacy.saturation(endpoints, this.clock.now()) >= 1 ? shed() : "pass";
  }

  flowItem(request: SchedulingRequest): FlowItem {
    const slo = sloTtftMs(request.headers);
    const session = request.headers["x-session-id"] || request.attributes.get(AGENT_IDENTITY_ATTRIBUTE);
    return {
      id: request.requestId,
      fairnessId: request.fairnessId,
      priority: request.priority,
      bytes: request.bodyBytes,
      enqueuedAt: this.clock.now(),
      inputTokens: request.inputTokens ?? defaultTokenizer.count(request.promptText),
      ...(slo === undefined ? {} : { sloTtftMs: slo }),
      ...(typeof session === "string" && session ? { sessionId: session } : {}),
      ...(typeof session === "string" && session && this.turns
        ? { turn: this.turns.turnsTaken(session) }
        : {}),
    };
  }

  private admit(request: SchedulingRequest, endpoints: readonly Endpoint[]): LlmdError | undefined {
    if (this.admitters.length === 0) return undefined;
    const ctx = { request, state: new Map<string, unknown>(), clock: this.clock };
    for (const admitter of this.admitters) {
      const denial = admitter.admit(ctx, endpoints);
      if (denial) return denial;
    }
    return undefined;
  }
}

/** `x-llm-d-slo-ttft-ms` (or the older `x-slo-ttft-ms`) in ms, when a positive number. */
function sloTtftMs(headers: Readonly<Record<string, string>>): number | undefined {
  const value = Number(headers["x-llm-d-slo-ttft-ms"] ?? headers["x-slo-ttft-ms"]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}
