/**
 * The document schema of llm-d's EndpointPickerConfig (apiVersion `llm-d.ai/v1`, `llm-d.ai/v1alpha1`
 * and the older `inference.networking.x-k8s.io/v1alpha1`). Strict: unknown fields are rejected.
 * Plugin parameters and `flowControl` are validated later by their own schemas.
 */
import { z } from "zod";

/** apiVersion values accepted; all but the first produce a deprecation warning. */
export const API_VERSIONS = [
  "llm-d.ai/v1",
  "llm-d.ai/v1alpha1",
  "inference.networking.x-k8s.io/v1alpha1",
] as const;

const name = z
  .string({ error: "expected a non-empty string" })
  .min(1, { error: "expected a non-empty string" });
const ref = z.strictObject({ pluginRef: name });

const pluginSpec = z.strictObject({
  type: name,
  name: name.optional(),
  parameters: z.unknown().optional(),
});

const profileSpec = z.strictObject({
  name,
  plugins: z
    .array(
      z.strictObject({
        pluginRef: name,
        weight: z
          .number({ error: "expected a number ≥ 0" })
          .finite()
          .nonnegative({ error: "expected a number ≥ 0" })
          .optional(),
      }),
    )
    .default([]),
});

const duration = z.union([z.string(), z.number()]);

const dataLayerV1 = z.strictObject({
  injectDefaults: z.boolean().default(true),
  sources: z.array(z.strictObject({ pluginRef: name, extractors: z.array(ref).default([]) })).default([]),
  discovery: z.strictObject({ endpoints: ref.optional(), peers: ref.optional() }).optional(),
  crossReplica: z
    .strictObject({
      syncerPluginRef: name,
      syncInterval: duration.optional(),
      publishTimeout: duration.optional(),
    })
    .optional(),
});

const dataLayerV1alpha1 = z.strictObject({
  injectDefaults: z.boolean().default(true),
  sources: z.array(z.strictObject({ pluginRef: name, extractors: z.array(ref).default([]) })).default([]),
  discovery: ref.optional(),
  crossReplicaSyncerPluginRef: name.optional(),
  crossReplicaSyncInterval: duration.optional(),
  crossReplicaPublishTimeout: duration.optional(),
});

/** The data layer in v1 shape (v1alpha1 documents are normalised to it). */
export type DataLayerConfig = z.output<typeof dataLayerV1>;

/** v1alpha1 `discovery.pluginRef` / `crossReplica*` fields in the v1 shape. */
export function normaliseDataLayer(input: z.output<typeof dataLayerV1alpha1>): DataLayerConfig {
  const {
    discovery,
    crossReplicaSyncerPluginRef,
    crossReplicaSyncInterval,
    crossReplicaPublishTimeout,
    ...rest
  } = input;
  return {
    ...rest,
    ...(discovery ? { discovery: { endpoints: discovery } } : {}),
    ...(crossReplicaSyncerPluginRef
      ? {
          crossReplica: {
            syncerPluginRef: crossReplicaSyncerPluginRef,
            syncInterval: crossReplicaSyncInterval,
            publishTimeout: crossReplicaPublishTimeout,
          },
        }
      : {}),
  };
}

const common = {
  kind: z.literal("EndpointPickerConfig", { error: 'expected "EndpointPickerConfig"' }),
  featureGates: z.array(name).default([]),
  plugins: z.array(pluginSpec).default([]),
  schedulingProfiles: z.array(profileSpec).optional(),
  requestHandler: z
    .strictObject({ parsers: z.array(ref).optional(), propagatePriority: z.boolean().default(false) })
    .optional(),
  /** Validated by flow control's own schema once the shape is known to be an object. */
  flowControl: z.record(z.string(), z.unknown()).optional(),
  /** Legacy top-level detector settings (GIE v1alpha1 EndpointPickerConfig); kept as given. */
  saturationDetector: z
    .strictObject({
      queueDepthThreshold: z.number().int().positive().optional(),
      kvCacheUtilThreshold: z.number().min(0).max(1).optional(),
      metricsStalenessThreshold: duration.optional(),
    })
    .optional(),
};

/** An EndpointPickerConfig document as written, before defaulting. */
export const endpointPickerConfigSchema = z.discriminatedUnion(
  "apiVersion",
  [
    z.strictObject({ apiVersion: z.literal("llm-d.ai/v1"), ...common, dataLayer: dataLayerV1.optional() }),
    z.strictObject({
      apiVersion: z.enum(["llm-d.ai/v1alpha1", "inference.networking.x-k8s.io/v1alpha1"]),
      ...common,
      dataLayer: dataLayerV1alpha1.transform(normaliseDataLayer).optional(),
    }),
  ],
  { error: `expected apiVersion one of ${API_VERSIONS.join(", ")}` },
);

/** A validated document (v1 data-layer shape). */
export type EndpointPickerConfigDocument = z.output<typeof endpointPickerConfigSchema>;
/** One entry of `plugins`. */
export type PluginSpec = z.output<typeof pluginSpec>;
/** One entry of `schedulingProfiles`. */
export type ProfileSpec = z.output<typeof profileSpec>;
