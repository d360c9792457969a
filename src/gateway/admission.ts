/**
 * The gateway's wall-clock host of the lifecycle's admission stage: a request that screens
 * `queue` waits in a {@link FlowGate} (timers and promises around the shared flow controller)
 * until it is dispatched or answered; one that screens `pass` goes straight to scheduling with a
 * no-op lease.
 */
import type { LlmdError } from "../api/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { FlowControlConfig } from "../flow-control/config.ts";
import { type EvictHandler, FlowGate, type GatePool } from "../flow-control/host/gate.ts";
import type { TenantMap } from "../flow-control/identity.ts";
import type { AdmissionStage } from "../lifecycle/admission.ts";
import type { RequestLifecycle } from "../lifecycle/lifecycle.ts";
import type { Plugin } from "../plugin/types.ts";
import type { ResponseUsage, SchedulingRequest } from "../scheduler/framework/types.ts";

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
  /** Identity, screening and, when it queues, the wait → a lease, or the error that answers it. */
  admit(
    request: SchedulingRequest,
    candidates: readonly Endpoint[],
    signal: AbortSignal | undefined,
    onEvict: EvictHandler,
  ): Lease | LlmdError | Promise<Lease | LlmdError>;
  /** Queued requests get 503 `rejected-shutting-down`, later ones too. */
  shutdown(): void;
}

const NO_LEASE: Lease = Object.freeze({ placed: () => {}, release: () => {} });

/** The flow gate of a stage whose flow-control gate is on (undefined otherwise). */
export function flowGateFor(
  stage: AdmissionStage,
  pool: GatePool,
  clock: Clock,
  pollIntervalMs?: number,
): FlowGate | undefined {
  if (!stage.flowControl) return undefined;
  return new FlowGate({
    runtime: stage.flowControl,
    pool,
    clock,
    pollIntervalMs,
    onDispatchCycle: (seconds) => stage.metrics?.dispatchCycle(seconds),
  });
}

/** Hosts `lifecycle`'s admission on the wall clock. */
export function createGatewayAdmission(
  lifecycle: RequestLifecycle,
  pool: GatePool,
  clock: Clock,
  pollIntervalMs?: number,
): GatewayAdmission {
  const gate = flowGateFor(lifecycle.admission, pool, clock, pollIntervalMs);
  return {
    queues: gate !== undefined,
    admit(request, candidates, signal, onEvict) {
      const screening = lifecycle.arrive(request, candidates);
      if (screening === "pass") return NO_LEASE;
      if (screening !== "queue") return screening;
      return gate!.admit(lifecycle.flowItem(request), signal ?? new AbortController().signal, onEvict);
    },
    shutdown: () => gate?.shutdown(),
  };
}
