/**
 * Who a request is, decided once before admission and the same in every host: request-header
 * processors run first (so `agent-identity` can name the flow), then llm-d's rule gives the
 * priority (the InferenceObjective named by `x-llm-d-inference-objective`) and the fairness id
 * (`x-llm-d-inference-fairness-id`, else the agent identity, else `default-flow`). With a tenant
 * map the API key decides both (see flow-control/identity.ts).
 */
import type { Clock } from "../core/clock.ts";
import { type IdentityOptions, resolveFlowIdentity, type TenantMap } from "../flow-control/identity.ts";
import type { Plugin } from "../plugin/types.ts";
import { AGENT_IDENTITY_ATTRIBUTE } from "../scheduler/framework/data-keys.ts";
import type {
  RequestHeaderProcessor,
  RequestScheduler,
  SchedulingRequest,
} from "../scheduler/framework/types.ts";

/** InferenceObjective name → priority (higher = more important, negative = sheddable). */
export type ObjectiveMap = ReadonlyMap<string, number>;

/** Inputs of {@link RequestIdentity}. */
export interface RequestIdentityOptions {
  objectives: ObjectiveMap;
  /** Present = trusted edge: API keys decide tenants. */
  tenants?: TenantMap;
  /** Every configured plugin instance: whether any is a request-header processor. */
  plugins: ReadonlyMap<string, Plugin>;
  /** Runs the request-header processors (the only place they run: once per request). */
  scheduler: Pick<RequestScheduler, "processRequestHeaders">;
  clock: Clock;
}

function isHeaderProcessor(plugin: Plugin): plugin is RequestHeaderProcessor {
  return typeof (plugin as Partial<RequestHeaderProcessor>).processRequestHeaders === "function";
}

/** Resolves `priority`, `fairnessId` and `tenant` of requests (see the module comment). */
export class RequestIdentity {
  private readonly processesHeaders: boolean;
  /** The identity options of a request without an agent identity (the same for all of them). */
  private readonly anonymous: IdentityOptions;

  constructor(private readonly options: RequestIdentityOptions) {
    this.processesHeaders = [...options.plugins.values()].some(isHeaderProcessor);
    this.anonymous = {
      objectives: options.objectives,
      ...(options.tenants ? { tenants: options.tenants } : {}),
    };
  }

  /** Sets the request's identity fields in place. */
  resolve(request: SchedulingRequest): void {
    if (this.processesHeaders) {
      const ctx = { request, state: new Map<string, unknown>(), clock: this.options.clock };
      this.options.scheduler.processRequestHeaders(ctx);
    }
    const agent = request.attributes.get(AGENT_IDENTITY_ATTRIBUTE);
    const options =
      typeof agent === "string" && agent ? { ...this.anonymous, agentIdentity: agent } : this.anonymous;
    const identity = resolveFlowIdentity(request.headers, options);
    request.priority = identity.priority;
    request.fairnessId = identity.fairnessId;
    if (identity.tenant !== undefined) request.tenant = identity.tenant;
  }
}
