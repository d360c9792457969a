/**
 * `loadConfig`: an llm-d EndpointPickerConfig (YAML or JSON text, or a file) → a frozen runtime
 * object holding the Scheduler and the validated sections. Phases: parse → document schema →
 * feature gates → plugins (registry, stability, parameters, default producers) → profiles and
 * handler → flow control and data-layer references → data-layer wiring and injected defaults.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { type Clock, wallClock } from "../core/clock.ts";
import { type FlowControlConfig, flowControlConfigSchema } from "../flow-control/config.ts";
import { instrumentScheduler, type SchedulerObserver } from "../scheduler/framework/instrument.ts";
import type { PluginRegistry } from "../plugin/registry.ts";
import { Scheduler } from "../scheduler/framework/scheduler.ts";
import type { RequestScheduler } from "../scheduler/framework/types.ts";
import type { Plugin } from "../plugin/types.ts";
import { defaultTokenizer, type Tokenizer } from "../tokenizer/tokenizer.ts";
import { type DataLayerSelection, resolveDataLayer } from "./data-layer.ts";
import { parseFeatureGates } from "./feature-gates.ts";
import { type InstantiateOptions, instantiatePlugins } from "./instantiate.ts";
import { ConfigError, type ConfigIssue, fromZodIssues } from "./issues.ts";
import { buildSchedulerParts } from "./profiles.ts";
import { resolveReferences } from "./references.ts";
import { createBuiltinRegistry } from "./registry.ts";
import {
  type DataLayerConfig,
  type EndpointPickerConfigDocument,
  endpointPickerConfigSchema,
} from "./schema.ts";

/** Options of `loadConfig`. */
export interface LoadConfigOptions {
  /** Allow alpha plugins (llm-d's `--allow-experimental-plugins`). Default false. */
  allowExperimentalPlugins?: boolean;
  /** Clock handed to plugins (wall clock by default; the fleet simulator passes a virtual one). */
  clock?: Clock;
  tokenizer?: Tokenizer;
  /** Uniform [0,1) source for randomised plugins (seed it for reproducible runs). */
  random?: () => number;
  /** Defaults to the built-in registry. */
  registry?: PluginRegistry;
}

/** A loaded config, frozen. */
export interface RuntimeConfig {
  readonly apiVersion: string;
  /** The uninstrumented scheduler (no telemetry cost). */
  readonly scheduler: Scheduler;
  /** Every registered gate with its value. */
  readonly featureGates: Readonly<Record<string, boolean>>;
  readonly dataLayer: DataLayerConfig | undefined;
  /** The data-layer plugins in effect (defaults injected); `endpointPoolOptionsFromConfig` applies them. */
  readonly dataLayerPlugins: DataLayerSelection;
  readonly requestHandler: EndpointPickerConfigDocument["requestHandler"];
  /** Validated and resolved when the section is present or the `flowControl` gate is on. */
  readonly flowControl: FlowControlConfig | undefined;
  /** Legacy top-level saturation detector settings, as written. */
  readonly saturationDetector: EndpointPickerConfigDocument["saturationDetector"];
  /** Every plugin instance by name: configured ones, auto-added producers and flow-control defaults. */
  readonly plugins: ReadonlyMap<string, Plugin>;
  /** Deprecations and other non-fatal notes. */
  readonly warnings: readonly string[];
  /** A scheduler over the same plugin instances that reports timings to `observer`. */
  instrument(observer: SchedulerObserver): RequestScheduler;
}

/** Result of `parseConfig`: the runtime, or every issue found. */
export type ParseConfigResult = { ok: true; config: RuntimeConfig } | { ok: false; issues: ConfigIssue[] };

function readDocument(text: string): unknown | ConfigIssue[] {
  try {
    return parseYaml(text) ?? {};
  } catch (err) {
    return [{ path: "", message: `not valid YAML: ${err instanceof Error ? err.message : String(err)}` }];
  }
}

function parseFlowControl(doc: EndpointPickerConfigDocument, enabled: boolean, issues: ConfigIssue[]) {
  if (!doc.flowControl && !enabled) return undefined;
  const parsed = flowControlConfigSchema.safeParse(doc.flowControl ?? {}, { reportInput: true });
  if (parsed.success) return parsed.data;
  issues.push(...fromZodIssues("flowControl", parsed.error.issues));
  return undefined;
}

/** Validates and builds a config without throwing. */
export function parseConfig(text: string, options: LoadConfigOptions = {}): ParseConfigResult {
  const raw = readDocument(text);
  if (Array.isArray(raw)) return { ok: false, issues: raw };
  const parsed = endpointPickerConfigSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: fromZodIssues("", parsed.error.issues) };
  const doc = parsed.data;
  const warnings: string[] = [];
  if (doc.apiVersion !== "llm-d.ai/v1")
    warnings.push(`apiVersion ${doc.apiVersion} is deprecated, use llm-d.ai/v1`);
  const { gates, issues } = parseFeatureGates(doc.featureGates);
  const flowControl = parseFlowControl(doc, gates.flowControl === true, issues);
  if (issues.length > 0) return { ok: false, issues };
  const instantiateOptions: InstantiateOptions = {
    registry: options.registry ?? createBuiltinRegistry(),
    allowExperimentalPlugins: options.allowExperimentalPlugins ?? false,
    clock: options.clock ?? wallClock,
    tokenizer: options.tokenizer ?? defaultTokenizer,
    ...(options.random ? { random: options.random } : {}),
  };
  const set = instantiatePlugins(doc.plugins, instantiateOptions, warnings);
  if (Array.isArray(set)) return { ok: false, issues: set };
  const parts = buildSchedulerParts(doc.schedulingProfiles, set, instantiateOptions);
  if (Array.isArray(parts)) return { ok: false, issues: parts };
  const refIssues = resolveReferences(doc, flowControl, set, instantiateOptions);
  if (refIssues.length > 0) return { ok: false, issues: refIssues };
  const dataLayerPlugins = resolveDataLayer(doc.dataLayer, set, instantiateOptions, warnings);
  if (Array.isArray(dataLayerPlugins)) return { ok: false, issues: dataLayerPlugins };
  const scheduler = new Scheduler(parts);
  const config: RuntimeConfig = {
    apiVersion: doc.apiVersion,
    scheduler,
    featureGates: Object.freeze(gates),
    dataLayer: doc.dataLayer,
    dataLayerPlugins,
    requestHandler: doc.requestHandler,
    flowControl,
    saturationDetector: doc.saturationDetector,
    plugins: set.instances,
    warnings: Object.freeze(warnings),
    instrument: (observer) => instrumentScheduler(scheduler, observer),
  };
  return { ok: true, config: Object.freeze(config) };
}

/**
 * Loads a config from text or `{ path }`; throws ConfigError (listing every issue) when it cannot
 * be used. Config loading is a startup edge, so failure is an exception here.
 */
export function loadConfig(
  source: string | { path: string },
  options: LoadConfigOptions = {},
): RuntimeConfig {
  const text = typeof source === "string" ? source : readFileSync(source.path, "utf8");
  const result = parseConfig(text, options);
  if (!result.ok) throw new ConfigError(result.issues);
  return result.config;
}
