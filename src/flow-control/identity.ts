/**
 * Who a request is, for flow control: its priority (from the InferenceObjective named by
 * `x-llm-d-inference-objective`) and its fairness id (`x-llm-d-inference-fairness-id`, else the
 * agent identity, else `default-flow`). With a `TenantMap` the router acts as a trusted edge: an
 * API key (`Authorization: Bearer …`) decides the tenant's fairness id and caps its priority, and
 * client-asserted headers cannot raise either.
 */
import { parseAllDocuments } from "yaml";
import { z } from "zod";

/** Fairness id when nothing identifies the caller. */
export const DEFAULT_FAIRNESS_ID = "default-flow";

const OBJECTIVE_HEADERS = ["x-llm-d-inference-objective", "x-gateway-inference-objective"] as const;
const FAIRNESS_HEADERS = ["x-llm-d-inference-fairness-id", "x-gateway-inference-fairness-id"] as const;

const objectiveDocumentSchema = z.object({
  kind: z.literal("InferenceObjective"),
  metadata: z.object({ name: z.string().min(1) }),
  spec: z.object({ priority: z.number().int().optional(), poolRef: z.object({ name: z.string() }) }),
});

/**
 * Objective name → priority from YAML text holding InferenceObjective documents (llm-d.ai/v1alpha2;
 * other kinds are skipped; unset priority = 0). Throws naming the document on a malformed objective.
 */
export function parseObjectives(yamlText: string): Map<string, number> {
  const objectives = new Map<string, number>();
  parseAllDocuments(yamlText).forEach((document, index) => {
    const value = document.toJS() as { kind?: unknown } | null;
    if (value?.kind !== "InferenceObjective") return;
    const parsed = objectiveDocumentSchema.safeParse(value);
    if (!parsed.success)
      throw new Error(`document ${index}: invalid InferenceObjective: ${parsed.error.message}`);
    objectives.set(parsed.data.metadata.name, parsed.data.spec.priority ?? 0);
  });
  return objectives;
}

const tenantFileSchema = z.strictObject({
  tenants: z.array(
    z.strictObject({
      name: z.string().min(1),
      apiKeys: z.array(z.string().min(8)).min(1),
      /** Defaults to the tenant name. */
      fairnessId: z.string().min(1).optional(),
      /** Objective applied when the client names none. */
      objective: z.string().min(1).optional(),
      /** Highest priority this tenant may reach (client objectives are capped to it). */
      maxPriority: z.number().int().optional(),
    }),
  ),
});

/** One tenant of a trusted edge. */
export type Tenant = z.output<typeof tenantFileSchema>["tenants"][number];

/** API key → tenant, parsed from a YAML file `{tenants: [{name, apiKeys, fairnessId?, objective?, maxPriority?}]}`. */
export class TenantMap {
  private readonly byKey = new Map<string, Tenant>();

  constructor(tenants: readonly Tenant[]) {
    for (const tenant of tenants) {
      for (const key of tenant.apiKeys) {
        if (this.byKey.has(key)) throw new Error(`api key of tenant ${tenant.name} is already used`);
        this.byKey.set(key, tenant);
      }
    }
  }

  /** Parses and validates a tenant file; throws with the offending path. */
  static parse(yamlText: string): TenantMap {
    const parsed = tenantFileSchema.safeParse(parseAllDocuments(yamlText)[0]?.toJS() ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`tenant file ${issue?.path.join(".")}: ${issue?.message}`);
    }
    return new TenantMap(parsed.data.tenants);
  }

  /** The tenant owning the bearer token in `authorization`, if any. */
  fromAuthorization(authorization: string | undefined): Tenant | undefined {
    const match = authorization ? /^Bearer\s+(\S+)$/i.exec(authorization.trim()) : null;
    return match ? this.byKey.get(match[1]!) : undefined;
  }
}

/** Inputs of identity resolution. */
export interface IdentityOptions {
  /** InferenceObjective name → priority. */
  objectives: ReadonlyMap<string, number>;
  /** Present = trusted edge: headers cannot choose the fairness id, and priority is capped. */
  tenants?: TenantMap;
  /** The `agent-identity` attribute, when a header processor set one. */
  agentIdentity?: string;
}

/** A request's flow identity. */
export interface FlowIdentity {
  priority: number;
  fairnessId: string;
  /** The authenticated tenant (trusted edge only). */
  tenant?: string;
}

function firstHeader(headers: Readonly<Record<string, string | undefined>>, names: readonly string[]) {
  for (const name of names) {
    const value = headers[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

/**
 * Priority and fairness id of a request from its (lower-cased) headers. On a trusted edge an
 * unknown or missing API key gets no client-asserted privileges: priority at most 0 and the
 * fairness id from the agent identity or `default-flow`.
 */
export function resolveFlowIdentity(
  headers: Readonly<Record<string, string | undefined>>,
  options: IdentityOptions,
): FlowIdentity {
  const fallbackId = options.agentIdentity || DEFAULT_FAIRNESS_ID;
  const objective = firstHeader(headers, OBJECTIVE_HEADERS);
  const claimedPriority = objective === undefined ? 0 : (options.objectives.get(objective) ?? 0);
  if (!options.tenants) {
    return { priority: claimedPriority, fairnessId: firstHeader(headers, FAIRNESS_HEADERS) ?? fallbackId };
  }
  const tenant = options.tenants.fromAuthorization(headers.authorization);
  if (!tenant) return { priority: Math.min(claimedPriority, 0), fairnessId: fallbackId };
  const tenantPriority =
    objective === undefined && tenant.objective !== undefined
      ? (options.objectives.get(tenant.objective) ?? 0)
      : claimedPriority;
  return {
    priority: Math.min(tenantPriority, tenant.maxPriority ?? Number.POSITIVE_INFINITY),
    fairnessId: tenant.fairnessId ?? tenant.name,
    tenant: tenant.name,
  };
}
