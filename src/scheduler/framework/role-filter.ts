/**
 * Building block for llm-d's role filters (decode-filter, prefill-filter, encode-filter): keep the
 * endpoints whose `llm-d.ai/role` label is one of a set of roles, optionally also unlabeled ones.
 */
import { type Endpoint, ROLE_LABEL } from "../../endpoints/endpoint.ts";
import { noParameters } from "../../plugin/params.ts";
import type { Filter, SchedulingContext } from "./types.ts";
import type { PluginDefinition, Stability } from "../../plugin/types.ts";

/** What distinguishes one role filter from another. */
export interface RoleFilterSpec {
  type: string;
  description: string;
  stability: Stability;
  /** Role label values kept. */
  roles: readonly string[];
  /** Whether endpoints without the role label are kept (decode-filter: yes). */
  keepUnlabeled: boolean;
}

class RoleFilter implements Filter {
  constructor(
    readonly type: string,
    readonly name: string,
    private readonly roles: ReadonlySet<string>,
    private readonly keepUnlabeled: boolean,
  ) {}

  /** The input array itself when every endpoint is kept (the common case: no copy, no closure). */
  filter(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    let first = 0;
    while (first < endpoints.length && this.keeps(endpoints[first]!)) first++;
    if (first === endpoints.length) return endpoints;
    const kept = endpoints.slice(0, first);
    for (let i = first + 1; i < endpoints.length; i++)
      if (this.keeps(endpoints[i]!)) kept.push(endpoints[i]!);
    return kept;
  }

  private keeps(endpoint: Endpoint): boolean {
    const role = endpoint.metadata.labels[ROLE_LABEL];
    return role === undefined ? this.keepUnlabeled : this.roles.has(role);
  }
}

/** A parameterless plugin definition for the given role filter. */
export function defineRoleFilter(spec: RoleFilterSpec): PluginDefinition<Record<string, never>> {
  const roles = new Set(spec.roles);
  return {
    type: spec.type,
    stability: spec.stability,
    description: spec.description,
    parameters: noParameters,
    create: (_params, env) => new RoleFilter(spec.type, env.name, roles, spec.keepUnlabeled),
  };
}
