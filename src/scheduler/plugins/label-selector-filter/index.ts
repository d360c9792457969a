/** `label-selector-filter`: keeps endpoints whose labels match a Kubernetes label selector. */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { Filter, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { type LabelSelector, labelMatcher, labelSelectorSchema } from "../shared/label-selector.ts";

/** Parsed parameters: all `matchLabels` and all `matchExpressions` must hold (k8s semantics). */
export type LabelSelectorParams = LabelSelector;

class LabelSelectorFilter implements Filter {
  readonly type = "label-selector-filter";
  private readonly matches: (labels: Readonly<Record<string, string>>) => boolean;

  constructor(
    readonly name: string,
    selector: LabelSelectorParams,
  ) {
    this.matches = labelMatcher(selector);
  }

  filter(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    return endpoints.filter((e) => this.matches(e.metadata.labels));
  }
}

/** Kubernetes label selector over endpoint (pod) labels; an empty selector keeps everything. */
export const definition: PluginDefinition<LabelSelectorParams> = {
  type: "label-selector-filter",
  stability: "beta",
  description: "Keeps endpoints matching a k8s label selector (matchLabels, matchExpressions)",
  parameters: labelSelectorSchema,
  aliases: ["by-label-selector"],
  create: (params, env) => new LabelSelectorFilter(env.name, params),
};
