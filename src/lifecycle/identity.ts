/**
 * Who a request is, decided once before admission and the same in every host: request-header
 * processors run first (so `agent-identity` can name the flow), then llm-d's rule gives the
 * priority (the InferenceObjective named by `x-llm-d-inference-objective`) and the fairness id
 * (`x-llm-d-inference-fairness-id`, else the agent identity, else `default-flow`). With a tenant
 * map the API key decides both (see flow-control/identity.ts).
 */
import type { Clock } from "../core/clock.ts";
import { resolveFlowIdentity, type TenantMap } from "../flow-control/identity.ts";
import type { Plugin } from "../plugin/types.ts";
import { AGENT_IDENTITY_ATTRIBUTE } from "../scheduler/framework/data-keys.ts";
import type { RequestHeaderProcessor, SchedulingRequest } from "../scheduler/framework/types.ts";

/** InferenceObjective name → priority (higher = more important, negative = sheddable). */
export type ObjectiveMap = ReadonlyMap<string, number>;

/** Inputs of {@link RequestIdentity}. */
export interface RequestIdentityOptions {
  objectives: ObjectiveMap;
  /** Present = trusted edge: API keys decide tenants. */
  tenants?: TenantMap;
  /** Every configured plugin instance; the request-header processors among them run here. */
  plugins: ReadonlyMap<string, Plugin>;
  clock: Clock;
}

function isHeaderProcessor(plugin: Plugin): plugin is RequestHeaderProcessor {
  return typeof (plugin as Partial<RequestHeaderProcessor>).processRequestHeaders === "function";
}

/** Resolves `priority`, `fairnessId` and `tenant` of requests (see the module comment). */
export class RequestIdentity {
  private readonly headerProcessors: readonly RequestHeaderProcessor[];

  constructor(private readonly options: RequestIdentityOptions) {
    this.headerProcessors = [...options.plugins.values()].filter(isHeaderProcessor);
  }

  /** Sets the request's identity fields in place. */
  resolve(request: SchedulingRequest): void {
    if (this.headerProcessors.length > 0) {
      const ctx = { request, state: new Map<string, unknown>(), clock: this.options.clock };
      for (const processor of this.headerProcessors) processor.processRequestHeaders(ctx);
    }
    const agent = request.attributes.get(AGENT_IDENTITY_ATTRIBUTE);
    const identity = resolveFlowIdentity(request.headers, {
      objectives: this.options.objectives,
      ...(this.options.tenants ? { tenants: this.options.tenants } : {}),
      ...(typeof agent === "string" && agent ? { agentIdentity: agent } : {}),
    });
    request.priority = identity.priority;
    request.fairnessId = identity.fairnessId;
    if (identity.tenant !== undefined) request.tenant = identity.tenant;
  }
}
