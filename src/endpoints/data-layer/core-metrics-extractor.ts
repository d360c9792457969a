/**
 * `core-metrics-extractor` (llm-d, beta, injected by default): which metric names each engine
 * exposes. Specs are compiled at config load, so a malformed one fails the config with its path.
 */
import { z } from "zod";
import { LlmdError } from "../../api/errors.ts";
import { BUILTIN_ENGINES, DEFAULT_ENGINE, ENGINE_LABEL } from "../engine-configs.ts";
import { parseMetricSpec } from "../metric-spec.ts";
import { dataLayerDefinition } from "./plugin.ts";

const metricSpec = z.string().superRefine((spec, ctx) => {
  try {
    parseMetricSpec(spec);
  } catch (err) {
    ctx.addIssue({ code: "custom", message: err instanceof LlmdError ? err.message : String(err) });
  }
});

const labelName = z.string().min(1);

const engineConfig = z.strictObject({
  name: z.string().min(1),
  queuedRequestsSpec: metricSpec.optional(),
  runningRequestsSpec: metricSpec.optional(),
  kvUsageSpec: metricSpec.optional(),
  loraSpec: metricSpec.optional(),
  cacheInfoSpec: metricSpec.optional(),
  cacheBlockSizeLabelName: labelName.optional(),
  cacheNumBlocksLabelName: labelName.optional(),
  cacheBlockSizeSpec: metricSpec.optional(),
  cacheNumBlocksSpec: metricSpec.optional(),
  customMetrics: z
    .array(
      z.strictObject({
        attributeKey: z.string().min(1),
        metricSpec,
        /** llmd never counts a missing custom metric as an extract error, so this only documents intent. */
        optional: z.boolean().default(false),
      }),
    )
    .optional(),
});

/** llm-d's `core-metrics-extractor` parameters. */
export const coreMetricsExtractorParameters = z
  .strictObject({
    engineLabelKey: labelName.default(ENGINE_LABEL),
    defaultEngine: z.string().min(1).default(DEFAULT_ENGINE),
    engineConfigs: z.array(engineConfig).default([]),
  })
  .superRefine((p, ctx) => {
    const known = new Set([...BUILTIN_ENGINES, ...p.engineConfigs].map((e) => e.name));
    if (!known.has(p.defaultEngine))
      ctx.addIssue({
        code: "custom",
        path: ["defaultEngine"],
        message: `unknown engine "${p.defaultEngine}" (known: ${[...known].join(", ")})`,
      });
  });

/** Validated `core-metrics-extractor` parameters. */
export type CoreMetricsExtractorParams = z.output<typeof coreMetricsExtractorParameters>;

/** Registry entry for `core-metrics-extractor`. */
export const coreMetricsExtractor = dataLayerDefinition<CoreMetricsExtractorParams>({
  type: "core-metrics-extractor",
  kind: "extractor",
  description: "Reads queue, running, KV usage, LoRA and cache geometry per engine (engineConfigs)",
  parameters: coreMetricsExtractorParameters,
  configure: (p, draft) => {
    draft.metricsSpecs = {
      engineLabelKey: p.engineLabelKey,
      defaultEngine: p.defaultEngine,
      engineConfigs: p.engineConfigs.map(({ customMetrics, ...engine }) => ({
        ...engine,
        ...(customMetrics
          ? {
              customMetrics: customMetrics.map(({ attributeKey, metricSpec }) => ({
                attributeKey,
                metricSpec,
              })),
            }
          : {}),
      })),
    };
  },
});
