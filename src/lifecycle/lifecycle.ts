/**
 * One request lifecycle for every host: identity → admission → scheduling → dispatch (the host's
 * part) → first token → completion, exactly once. The gateway (wall clock, HTTP) and the fleet
 * simulator (virtual clock, in-process engines) are thin hosts over it, so what the fleet measures
 * is the code that ships.
 */
import type { LlmdError } from "../api/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { FlowItem } from "../flow-control/types.ts";
import type {
  RequestScheduler,
  ResponseUsage,
  SchedulingContext,
  SchedulingRequest,
  TerminationCause,
} from "../scheduler/framework/types.ts";
import {
  type AdmissionStage,
  type AdmissionStageOptions,
  createAdmissionStage,
  type Screening,
} from "./admission.ts";
import { type ObjectiveMap, RequestIdentity } from "./identity.ts";
import { type Placement, placeRequest } from "./placement.ts";
import type { TenantMap } from "../flow-control/identity.ts";

/** Inputs of {@link RequestLifecycle}: the loaded config's parts plus the host's clock and pool. */
export interface LifecycleOptions extends AdmissionStageOptions {
  scheduler: RequestScheduler;
  objectives: ObjectiveMap;
  tenants?: TenantMap;
  clock: Clock;
  /** Told each profile run's duration in seconds (the gateway's scheduling histogram). */
  onScheduled?(seconds: number): void;
}

/** See the module comment. Single-threaded; one instance per host. */
export class RequestLifecycle {
  readonly admission: AdmissionStage;
  private readonly identity: RequestIdentity;

  constructor(private readonly options: LifecycleOptions) {
    this.admission = createAdmissionStage(options);
    this.identity = new RequestIdentity(options);
  }

  /** A request arrives: its identity is resolved, then admission screens it. */
  arrive(request: SchedulingRequest, endpoints: readonly Endpoint[]): Screening {
    this.identity.resolve(request);
    return this.admission.screen(request, endpoints);
  }

  /** The flow-control item of an arriving request that screened `queue`. */
  flowItem(request: SchedulingRequest): FlowItem {
    return this.admission.flowItem(request);
  }

  /** Schedules an admitted request (see {@link placeRequest}); each attempt gets a fresh context. */
  place(
    request: SchedulingRequest,
    endpoints: readonly Endpoint[],
  ): Placement | LlmdError | Promise<Placement | LlmdError> {
    const ctx: SchedulingContext = { request, state: new Map(), clock: this.options.clock };
    return placeRequest(this.options.scheduler, ctx, endpoints, this.options.onScheduled);
  }

  /** The first token (or first body byte) of a placed request arrived. */
  firstToken(placement: Placement): void {
    this.options.scheduler.firstToken(placement.ctx, placement.target);
  }

  /** A placed request ended, on any path; call exactly once per placement. */
  complete(placement: Placement, cause: TerminationCause, usage: ResponseUsage | undefined): void {
    this.options.scheduler.complete(placement.ctx, placement.target, cause, usage);
  }
}
