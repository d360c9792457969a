/** Kubernetes label selectors over endpoint (pod) labels, as llm-d's plugins accept them. */
import { z } from "zod";

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

/** A selector's schema: all `matchLabels` and all `matchExpressions` must hold (k8s semantics). */
export const labelSelectorSchema = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).default({}),
  matchExpressions: z.array(requirement).default([]),
});

/** A parsed label selector. */
export type LabelSelector = z.output<typeof labelSelectorSchema>;
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

/** A predicate over labels for `selector`; an empty selector matches everything. */
export function labelMatcher(selector: LabelSelector): (labels: Readonly<Record<string, string>>) => boolean {
  const pairs = Object.entries(selector.matchLabels);
  return (labels) =>
    pairs.every(([k, v]) => labels[k] === v) && selector.matchExpressions.every((r) => satisfies(labels, r));
}
