/** `label-selector-filter`: keeps endpoints whose labels match a Kubernetes label selector. */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { Filter, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

const requirement = z
  .strictObject({
    key: z.string().min(1),
    operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
    values: z.array(z.string()).default([]),
  })
  .refine(
    (r) => (r.operator === "In" || r.operator === "NotIn" ? r.values.length > 0 : r.values.length === 0),
    {
      error: "In/NotIn need non-empty values; Exists/DoesNotExist take none",
    },
  );

const parameters = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).default({}),
  matchExpressions: z.array(requirement).default([]),
});

/** Parsed parameters: all `matchLabels` and all `matchExpressions` must hold (k8s semantics). */
export type LabelSelectorParams = z.output<typeof parameters>;
type Requirement = z.output<typeof requirement>;

function satisfies(labels: Readonly<Record<string, string>>, r: Requirement): boolean {
  const value = labels[r.key];
  switch (r.operator) {
    case "In":
      return value !== undefined && r.values.includes(value);
    case "NotIn":
      return value === undefined || !r.values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
  }
}

class LabelSelectorFilter implements Filter {
  readonly type = "label-selector-filter";
  private readonly labelPairs: [string, string][];

  constructor(
    readonly name: string,
    private readonly selector: LabelSelectorParams,
  ) {
    this.labelPairs = Object.entries(selector.matchLabels);
  }

  private matches(endpoint: Endpoint): boolean {
    const labels = endpoint.metadata.labels;
    return (
      this.labelPairs.every(([k, v]) => labels[k] === v) &&
      this.selector.matchExpressions.every((r) => satisfies(labels, r))
    );
  }

  filter(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    return endpoints.filter((e) => this.matches(e));
  }
}

/** Kubernetes label selector over endpoint (pod) labels; an empty selector keeps everything. */
export const definition: PluginDefinition<LabelSelectorParams> = {
  type: "label-selector-filter",
  stability: "beta",
  description: "Keeps endpoints matching a k8s label selector (matchLabels, matchExpressions)",
  parameters,
  aliases: ["by-label-selector"],
  create: (params, env) => new LabelSelectorFilter(env.name, params),
};
