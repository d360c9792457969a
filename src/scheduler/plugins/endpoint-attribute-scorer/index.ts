/**
 * `endpoint-attribute-scorer` (llm-d, alpha): scores endpoints by one numeric attribute, linearly
 * normalised over a fixed `[min, max]` (clamped) or over the candidates' own range; lower or higher
 * is better. An endpoint without the attribute scores 0 and takes no part in the adaptive range.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import { endpointAttributeKey, readNumericAttribute } from "../shared/endpoint-attribute.ts";

const normalization = z
  .strictObject({
    adaptiveRange: z.strictObject({}).optional(),
    fixedRange: z
      .strictObject({ min: z.number().finite(), max: z.number().finite() })
      .refine((r) => r.min < r.max, { message: "fixedRange requires min < max" })
      .optional(),
  })
  .refine((n) => !(n.adaptiveRange && n.fixedRange), {
    message: "at most one normalization strategy: fixedRange or adaptiveRange",
  });

const parameters = z.strictObject({
  attributeKey: z.string().min(1),
  producer: z.string().optional(),
  algorithm: z.strictObject({
    type: z.enum(["linear_lower_is_better", "linear_higher_is_better"]),
    normalization: normalization.default({}),
  }),
});

/** Validated parameters of `endpoint-attribute-scorer`. */
export type EndpointAttributeScorerParams = z.output<typeof parameters>;

class EndpointAttributeScorer implements Scorer {
  readonly type = "endpoint-attribute-scorer";
  readonly category = "distribution";
  private readonly key: string;
  private readonly lowerIsBetter: boolean;

  constructor(
    readonly name: string,
    private readonly params: EndpointAttributeScorerParams,
  ) {
    this.key = endpointAttributeKey(params.attributeKey, params.producer);
    this.lowerIsBetter = params.algorithm.type === "linear_lower_is_better";
  }

  score(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const values = endpoints.map((e) => readNumericAttribute(e, this.key));
    const [min, max] = this.range(values);
    const scores = new Float64Array(endpoints.length);
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v === undefined) continue;
      // All present values equal (adaptive range): a neutral 1 for each.
      const ratio = max > min ? Math.min(1, Math.max(0, (v - min) / (max - min))) : 1;
      scores[i] = this.lowerIsBetter && max > min ? 1 - ratio : ratio;
    }
    return scores;
  }

  private range(values: readonly (number | undefined)[]): [number, number] {
    const fixed = this.params.algorithm.normalization.fixedRange;
    if (fixed) return [fixed.min, fixed.max];
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (const v of values) {
      if (v === undefined) continue;
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    return [min, max];
  }
}

/** Registry entry for `endpoint-attribute-scorer`. */
export const definition: PluginDefinition<EndpointAttributeScorerParams> = {
  type: "endpoint-attribute-scorer",
  stability: "alpha",
  description: "Scores endpoints by a numeric attribute, linear over a fixed or the candidates' range",
  parameters,
  create: (params, env) => new EndpointAttributeScorer(env.name, params),
};
