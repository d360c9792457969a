/**
 * The `flowControl` section of an EndpointPickerConfig, with llm-d's v1 field names and defaults.
 * Parsing normalises units: Quantities become integer counts, durations become milliseconds, and
 * every band template is fully resolved, so the controller never re-derives defaults.
 */
import { z } from "zod";
import { durationMsSchema, quantitySchema as quantity } from "../core/units.ts";

/** Default fairness policy type (one logical queue per band). */
export const DEFAULT_FAIRNESS_POLICY = "global-strict-fairness-policy";
/** Default ordering policy type (exact FCFS by logical enqueue time). */
export const DEFAULT_ORDERING_POLICY = "fcfs-ordering-policy";
/** Default saturation detector type. */
export const DEFAULT_SATURATION_DETECTOR = "utilization-detector";
/** Default usage-limit policy type (one ceiling of 1.0 for all bands). */
export const DEFAULT_USAGE_LIMIT_POLICY = "static-usage-limit-policy";

const DEFAULT_BAND_MAX_BYTES = 1e9;
const DEFAULT_BAND_MAX_REQUESTS = 5000;
const DEFAULT_REQUEST_TTL_MS = 60_000;

const pluginRef = z.string().min(1);

const bandShape = {
  maxBytes: quantity.optional(),
  maxRequests: quantity.optional(),
  defaultRequestTTL: durationMsSchema.optional(),
  fairnessPolicyRef: pluginRef.optional(),
  orderingPolicyRef: pluginRef.optional(),
};

const bandTemplateSchema = z.strictObject(bandShape);
const priorityBandSchema = z.strictObject({ priority: z.number().int(), ...bandShape });

type BandInput = z.output<typeof bandTemplateSchema>;

/** A fully resolved band: counts, bytes, optional TTL override (ms; 0 = no TTL), policy refs. */
export interface BandSettings {
  /** Max queued bytes in this band (> 0). */
  maxBytes: number;
  /** Max queued requests in this band (> 0). */
  maxRequests: number;
  /** Queue-wait budget in ms for this band; undefined inherits the global one; 0 = wait forever. */
  defaultRequestTTL: number | undefined;
  fairnessPolicyRef: string;
  orderingPolicyRef: string;
}

/** An explicitly configured band. */
export interface PriorityBandSettings extends BandSettings {
  priority: number;
}

function resolveBand(input: BandInput | undefined, base: BandSettings): BandSettings {
  return {
    maxBytes: input?.maxBytes || base.maxBytes,
    maxRequests: input?.maxRequests || base.maxRequests,
    defaultRequestTTL: input?.defaultRequestTTL ?? base.defaultRequestTTL,
    fairnessPolicyRef: input?.fairnessPolicyRef ?? base.fairnessPolicyRef,
    orderingPolicyRef: input?.orderingPolicyRef ?? base.orderingPolicyRef,
  };
}

const BUILT_IN_BAND: BandSettings = {
  maxBytes: DEFAULT_BAND_MAX_BYTES,
  maxRequests: DEFAULT_BAND_MAX_REQUESTS,
  defaultRequestTTL: undefined,
  fairnessPolicyRef: DEFAULT_FAIRNESS_POLICY,
  orderingPolicyRef: DEFAULT_ORDERING_POLICY,
};

/**
 * Schema of `flowControl` (strict: unknown fields rejected). Output: `maxBytes`/`maxRequests`
 * as integers (0 = unlimited), TTLs in ms (`defaultRequestTTL` 0 = wait until the client leaves),
 * `noEndpointRequestTTL` defaulting to `defaultRequestTTL`, and resolved band templates.
 */
export const flowControlConfigSchema = z
  .strictObject({
    maxBytes: quantity.default(0),
    maxRequests: quantity.default(0),
    defaultRequestTTL: durationMsSchema.default(DEFAULT_REQUEST_TTL_MS),
    noEndpointRequestTTL: durationMsSchema.optional(),
    defaultPriorityBand: bandTemplateSchema.optional(),
    defaultNegativePriorityBand: bandTemplateSchema.optional(),
    priorityBands: z.array(priorityBandSchema).default([]),
    usageLimitPolicyPluginRef: pluginRef.default(DEFAULT_USAGE_LIMIT_POLICY),
    bandSelectionPolicyPluginRef: pluginRef.optional(),
    saturationDetector: z
      .strictObject({ pluginRef: pluginRef.default(DEFAULT_SATURATION_DETECTOR) })
      .optional(),
    enableEviction: z.boolean().default(false),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<number>();
    config.priorityBands.forEach((band, index) => {
      if (seen.has(band.priority)) {
        ctx.addIssue({
          code: "custom",
          path: ["priorityBands", index, "priority"],
          message: `duplicate priority band ${band.priority}`,
        });
      }
      seen.add(band.priority);
    });
  })
  .transform((config) => {
    const defaultPriorityBand = resolveBand(config.defaultPriorityBand, BUILT_IN_BAND);
    const defaultNegativePriorityBand = resolveBand(config.defaultNegativePriorityBand, defaultPriorityBand);
    const priorityBands: PriorityBandSettings[] = config.priorityBands.map((band) => ({
      priority: band.priority,
      ...resolveBand(band, band.priority < 0 ? defaultNegativePriorityBand : defaultPriorityBand),
    }));
    return {
      maxBytes: config.maxBytes,
      maxRequests: config.maxRequests,
      defaultRequestTTL: config.defaultRequestTTL,
      noEndpointRequestTTL: config.noEndpointRequestTTL ?? config.defaultRequestTTL,
      defaultPriorityBand,
      defaultNegativePriorityBand,
      priorityBands,
      usageLimitPolicyPluginRef: config.usageLimitPolicyPluginRef,
      bandSelectionPolicyPluginRef: config.bandSelectionPolicyPluginRef,
      saturationDetector: { pluginRef: config.saturationDetector?.pluginRef ?? DEFAULT_SATURATION_DETECTOR },
      enableEviction: config.enableEviction,
    };
  });

/** Parsed, resolved flow-control config (units: counts, bytes, milliseconds). */
export type FlowControlConfig = z.output<typeof flowControlConfigSchema>;
/** What a user writes under `flowControl:`. */
export type FlowControlConfigInput = z.input<typeof flowControlConfigSchema>;

/** Settings for `priority`: its explicit band, else the default (or negative default) template. */
export function bandSettingsFor(config: FlowControlConfig, priority: number): BandSettings {
  const explicit = config.priorityBands.find((band) => band.priority === priority);
  if (explicit) return explicit;
  return priority < 0 ? config.defaultNegativePriorityBand : config.defaultPriorityBand;
}
