/**
 * Admission in front of scheduling. With the `flowControl` feature gate it is llm-d's flow control
 * (a {@link FlowGate}: requests wait in priority/fairness queues while the pool is saturated);
 * without it, llm-d's legacy admission: a sheddable request (priority < 0) gets 429
 * `rejected-saturated` while the configured saturation detector reads ≥ 1, everything else passes
 * at the cost of one comparison. A configured `probabilistic-admitter` runs first in both modes.
 */
import type { Registry } from "prom-client";
import type { LlmdError } from "../api/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import { createSaturationDetector } from "../flow-control/build.ts";
import { type FlowControlConfig, flowControlConfigSchema } from "../flow-control/config.ts";
import { createGatewayFlowControl } from "../flow-control/host/compose.ts";
import type { EvictHandler, FlowGate } from "../flow-control/host/gate.ts";
import { type TenantMap, resolveFlowIdentity } from "../flow-control/identity.ts";
import { flowOutcomeError } from "../flow-control/outcome-errors.ts";
import type { Admitter } from "../flow-control/policies/probabilistic-admitter.ts";
import type { SaturationDetector } from "../flow-control/types.ts";
import type {
  RequestHeaderProcessor,
  ResponseUsage,
  SchedulingRequest,
} from "../scheduler/framework/types.ts";
import type { Plugin } from "../plugin/types.ts";
import { defaultTokenizer } from "../tokenizer/tokenizer.ts";
import { AGENT_IDENTITY_ATTRIBUTE, type ObjectiveMap } from "./parse-request.ts";
import type { GatewayPool } from "./types.ts";

/** What the config decides about admission (see `startRouter`). */
export interface AdmissionOptions {
  /** `featureGates: [flowControl]`. */
  flowControlGate: boolean;
  /** The config's `flowControl` section (defaults when absent; its detector also drives legacy shedding). */
  flowControl: FlowControlConfig | undefined;
  /** Every configured plugin instance (refs, header processors, admitters resolve to them). */
  plugins: ReadonlyMap<string, Plugin>;
  /** Trusted edge: API keys decide tenants' fairness ids and cap their priorities. */
  tenants?: TenantMap;
  /** Flow-control poll while saturated (ms; default 20). */
  pollIntervalMs?: number;
}

/** An admitted request's lease: `placed` once scheduled, `release` exactly once at the end. */
export interface Lease {
  placed(endpointKey: string): void;
  release(usage?: ResponseUsage): void;
}

/** The admission stage as the request path drives it. */
export interface GatewayAdmission {
  /** True when `admit` may queue: the caller must pass a signal aborted when the client leaves. */
  readonly queues: boolean;
  /**
   * Resolves the request's priority and fairness id (tenants, objectives, agent identity), then
   * admits it → a lease, or the error that answers it (429/503 with dropped reason).
   */
  admit(
    request: SchedulingRequest,
    signal: AbortSignal | undefined,
    onEvict: EvictHandler,
  ): Lease | LlmdError | Promise<Lease | LlmdError>;
  /** Queued requests get 503 `rejected-shutting-down`, later ones too. */
  shutdown(): void;
}

/** Shared collaborators of {@link createAdmission}. */
export interface AdmissionContext {
  pool: GatewayPool;
  clock: Clock;
  objectives: ObjectiveMap;
  registry: Registry;
  poolName: string | undefined;
}

const NO_LEASE: Lease = Object.freeze({ placed: () => {}, release: () => {} });

/** Builds the admission stage; throws (a startup error) on an unresolvable flow-control ref. */
export function createAdmission(
  options: AdmissionOptions | undefined,
  context: AdmissionContext,
): GatewayAdmission {
  const plugins = options?.plugins ?? new Map<string, Plugin>();
  const identity = new Identity(context, plugins, options?.tenants);
  const admitters = [...plugins.values()].filter(isAdmitter);
  if (!options) return new LegacyAdmission(undefined, identity, admitters, context);
  const config = options.flowControl ?? flowControlConfigSchema.parse({});
  if (options.flowControlGate) {
    const { gate } = createGatewayFlowControl({
      config,
      plugins,
      pool: { candidates: () => context.pool.candidates(), on: context.pool.on?.bind(context.pool) },
      registry: context.registry,
      poolName: context.poolName,
      clock: context.clock,
      pollIntervalMs: options.pollIntervalMs,
    });
    return new GatedAdmission(gate, identity, admitters, context);
  }
  const detector = createSaturationDetector(config, {
    clock: context.clock,
    tokenizer: defaultTokenizer,
    lookup: (name) => plugins.get(name),
  });
  return new LegacyAdmission(detector, identity, admitters, context);
}

function isAdmitter(plugin: Plugin): plugin is Admitter {
  return typeof (plugin as Partial<Admitter>).admit === "function";
}

function isHeaderProcessor(plugin: Plugin): plugin is RequestHeaderProcessor {
  return typeof (plugin as Partial<RequestHeaderProcessor>).processRequestHeaders === "function";
}

/** Priority and fairness id of a request, decided before admission. */
class Identity {
  private readonly headerProcessors: readonly RequestHeaderProcessor[];

  constructor(
    private readonly context: AdmissionContext,
    plugins: ReadonlyMap<string, Plugin>,
    private readonly tenants: TenantMap | undefined,
  ) {
    this.headerProcessors = [...plugins.values()].filter(isHeaderProcessor);
  }

  /** Full resolution: header processors first, so the agent identity can name the flow. */
  resolve(request: SchedulingRequest): void {
    const ctx = { request, state: new Map<string, unknown>(), clock: this.context.clock };
    for (const processor of this.headerProcessors) processor.processRequestHeaders(ctx);
    const agent = request.attributes.get(AGENT_IDENTITY_ATTRIBUTE);
    const identity = resolveFlowIdentity(request.headers, {
      objectives: this.context.objectives,
      ...(this.tenants ? { tenants: this.tenants } : {}),
      ...(typeof agent === "string" ? { agentIdentity: agent } : {}),
    });
    request.priority = identity.priority;
    request.fairnessId = identity.fairnessId;
  }

  /** Cheap path: only a trusted edge overrides what the request parser read from headers. */
  resolveIfTrusted(request: SchedulingRequest): void {
    if (this.tenants) this.resolve(request);
  }
}

/**
 * Runs the admitters for a sheddable request; undefined = admitted. `candidates` are the model's
 * candidates when the caller already has them (looked up here otherwise).
 */
function denyByAdmitters(
  admitters: readonly Admitter[],
  request: SchedulingRequest,
  context: AdmissionContext,
  candidates?: readonly Endpoint[],
): LlmdError | undefined {
  if (request.priority >= 0 || admitters.length === 0) return undefined;
  const ctx = { request, state: new Map<string, unknown>(), clock: context.clock };
  const endpoints = candidates ?? context.pool.candidates(request.model);
  for (const admitter of admitters) {
    const denial = admitter.admit(ctx, endpoints);
    if (denial) return denial;
  }
  return undefined;
}

class LegacyAdmission implements GatewayAdmission {
  readonly queues = false;

  constructor(
    private readonly detector: SaturationDetector | undefined,
    private readonly identity: Identity,
    private readonly admitters: readonly Admitter[],
    private readonly context: AdmissionContext,
  ) {}

  admit(request: SchedulingRequest): Lease | LlmdError {
    this.identity.resolveIfTrusted(request);
    if (request.priority >= 0 || !this.detector) return NO_LEASE;
    const endpoints = this.context.pool.candidates(request.model);
    const denial = denyByAdmitters(this.admitters, request, this.context, endpoints);
    if (denial) return denial;
    const saturated = this.detector.saturation(endpoints, this.context.clock.now()) >= 1;
    return saturated ? (flowOutcomeError("rejected-saturated") as LlmdError) : NO_LEASE;
  }

  shutdown(): void {}
}

function sloTtftMs(headers: Readonly<Record<string, string>>): number | undefined {
  const value = Number(headers["x-llm-d-slo-ttft-ms"]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

class GatedAdmission implements GatewayAdmission {
  readonly queues = true;

  constructor(
    private readonly gate: FlowGate,
    private readonly identity: Identity,
    private readonly admitters: readonly Admitter[],
    private readonly context: AdmissionContext,
  ) {}

  admit(request: SchedulingRequest, signal: AbortSignal | undefined, onEvict: EvictHandler) {
    this.identity.resolve(request);
    const denial = denyByAdmitters(this.admitters, request, this.context);
    if (denial) return denial;
    const slo = sloTtftMs(request.headers);
    const session = request.headers["x-session-id"] || request.attributes.get(AGENT_IDENTITY_ATTRIBUTE);
    const item = {
      id: request.requestId,
      fairnessId: request.fairnessId,
      priority: request.priority,
      bytes: request.bodyBytes,
      enqueuedAt: 0,
      inputTokens: defaultTokenizer.count(request.promptText),
      ...(slo === undefined ? {} : { sloTtftMs: slo }),
      ...(typeof session === "string" && session ? { sessionId: session } : {}),
    };
    return this.gate.admit(item, signal ?? new AbortController().signal, onEvict);
  }

  shutdown(): void {
    this.gate.shutdown();
  }
}
