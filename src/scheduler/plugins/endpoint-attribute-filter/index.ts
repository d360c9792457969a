/**
 * `endpoint-attribute-filter` (llm-d, alpha): keeps the endpoints whose numeric attribute (a custom
 * metric, or another producer's attribute such as `dcgm-extractor`'s `GPUUtilization`) passes a
 * threshold, a range, a top-K cut or a percentile cut.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { positiveInt } from "../../../plugin/params.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import type { Filter, SchedulingContext } from "../../framework/types.ts";
import { endpointAttributeKey, readNumericAttribute } from "../shared/endpoint-attribute.ts";

const OPERATORS = {
  LessThan: (v: number, t: number) => v < t,
  LessThanOrEqual: (v: number, t: number) => v <= t,
  GreaterThan: (v: number, t: number) => v > t,
  GreaterThanOrEqual: (v: number, t: number) => v >= t,
  Equal: (v: number, t: number) => v === t,
  NotEqual: (v: number, t: number) => v !== t,
} as const;

const operator = z.enum(Object.keys(OPERATORS) as [keyof typeof OPERATORS, ...(keyof typeof OPERATORS)[]]);

const algorithm = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("threshold"),
    threshold: z.strictObject({ operator, value: z.number().finite() }),
  }),
  z.strictObject({
    type: z.literal("range"),
    range: z
      .strictObject({ min: z.number().finite(), max: z.number().finite() })
      .refine((r) => r.min <= r.max, { message: "range.min must be <= range.max" }),
  }),
  z.strictObject({
    type: z.literal("topK"),
    topK: z.strictObject({ k: positiveInt(), higherIsBetter: z.boolean().default(true) }),
  }),
  z.strictObject({
    type: z.literal("percentile"),
    percentile: z.strictObject({
      percentile: z.number().min(0).max(100),
      higherIsBetter: z.boolean().default(true),
    }),
  }),
]);

const parameters = z
  .strictObject({
    attribute: z.string().min(1),
    producer: z.string().optional(),
    onMissing: z.enum(["Pass", "Fail"]).default("Pass"),
    fallbackOnEmpty: z.boolean().default(false),
    algorithm,
  })
  .refine((p) => p.producer !== undefined || !p.attribute.includes("/"), {
    path: ["attribute"],
    message: 'an attribute containing "/" needs an explicit producer',
  });

/** Validated parameters of `endpoint-attribute-filter`. */
export type EndpointAttributeFilterParams = z.output<typeof parameters>;
type Algorithm = EndpointAttributeFilterParams["algorithm"];

/** The values (of endpoints that have the attribute) that pass `algo`, as a predicate. */
function passing(algo: Algorithm, values: readonly number[]): (value: number) => boolean {
  switch (algo.type) {
    case "threshold": {
      const { operator, value: t } = algo.threshold;
      return (v) => OPERATORS[operator](v, t);
    }
    case "range":
      return (v) => v >= algo.range.min && v <= algo.range.max;
    case "topK":
      return rankCut(values, algo.topK.higherIsBetter, Math.min(algo.topK.k, values.length));
    case "percentile": {
      const sorted = [...values].sort((a, b) => a - b);
      const rank = Math.max(1, Math.ceil((algo.percentile.percentile / 100) * sorted.length));
      const cutoff = sorted[rank - 1]!;
      return algo.percentile.higherIsBetter ? (v) => v >= cutoff : (v) => v <= cutoff;
    }
  }
}

/** Keeps the `k` best values: a predicate that admits each of them once (ties: first come). */
function rankCut(values: readonly number[], higherIsBetter: boolean, k: number): (value: number) => boolean {
  const ranked = [...values].sort((a, b) => (higherIsBetter ? b - a : a - b)).slice(0, k);
  const left = new Map<number, number>();
  for (const v of ranked) left.set(v, (left.get(v) ?? 0) + 1);
  return (v) => {
    const n = left.get(v) ?? 0;
    if (n === 0) return false;
    left.set(v, n - 1);
    return true;
  };
}

class EndpointAttributeFilter implements Filter {
  readonly type = "endpoint-attribute-filter";
  private readonly key: string;

  constructor(
    readonly name: string,
    private readonly params: EndpointAttributeFilterParams,
  ) {
    this.key = endpointAttributeKey(params.attribute, params.producer);
  }

  filter(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    const values = endpoints.map((e) => readNumericAttribute(e, this.key));
    const present = values.filter((v): v is number => v !== undefined);
    const pass = passing(this.params.algorithm, present);
    const keepMissing = this.params.onMissing === "Pass";
    const kept = endpoints.filter((_, i) => {
      const v = values[i];
      return v === undefined ? keepMissing : pass(v);
    });
    return kept.length === 0 && this.params.fallbackOnEmpty ? endpoints : kept;
  }
}

/** Registry entry for `endpoint-attribute-filter`. */
export const definition: PluginDefinition<EndpointAttributeFilterParams> = {
  type: "endpoint-attribute-filter",
  stability: "alpha",
  description: "Keeps endpoints whose numeric attribute passes a threshold, range, topK or percentile cut",
  parameters,
  create: (params, env) => new EndpointAttributeFilter(env.name, params),
};
