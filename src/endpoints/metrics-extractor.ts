/**
 * Turns one engine's Prometheus page into `EndpointMetrics` (llm-d's `core-metrics-extractor`).
 * Specs are compiled once per engine; each scrape is one pass of the scanner with reused scratch
 * state, so extraction allocates only the strings it keeps (LoRA names, matched label values).
 */
import type { EndpointMetrics } from "./endpoint.ts";
import {
  BUILTIN_ENGINES,
  DEFAULT_ENGINE,
  ENGINE_LABEL,
  type EngineMetricsConfig,
  type MetricsExtractorOptions,
} from "./engine-configs.ts";
import { parseMetricSpec } from "./metric-spec.ts";
import { labelsMatch, readLabel, scanSamples } from "./prom-text.ts";

const QUEUED = 0;
const RUNNING = 1;
const KV_USAGE = 2;
const LORA = 3;
const CACHE_INFO = 4;
const BLOCK_SIZE = 5;
const NUM_BLOCKS = 6;
const FIRST_CUSTOM = 7;
/** Roles whose absence from a page counts as an extract error. */
const REQUIRED = [QUEUED, RUNNING, KV_USAGE] as const;

interface Handler {
  role: number;
  matchers: readonly (readonly [string, string])[];
}

/** Extracts one engine's metrics. Not re-entrant (scratch state is reused), which is fine: extraction is synchronous. */
export class MetricsExtractor {
  readonly engine: string;
  private readonly names: string[] = [];
  private readonly handlers: Handler[][] = [];
  private readonly configured: boolean[] = [];
  private readonly customKeys: string[];
  private readonly values: Float64Array;
  private readonly found: Uint8Array;
  private text = "";
  private loraStart = 0;
  private loraEnd = 0;
  private cacheStart = 0;
  private cacheEnd = 0;
  private readonly onSample = (nameIndex: number, start: number, end: number, value: number) =>
    this.accept(nameIndex, start, end, value);

  /** Compiles `config`; throws a 400 `LlmdError` when a spec is malformed. */
  constructor(private readonly config: EngineMetricsConfig) {
    this.engine = config.name;
    const specs = [
      config.queuedRequestsSpec,
      config.runningRequestsSpec,
      config.kvUsageSpec,
      config.loraSpec,
      config.cacheInfoSpec,
      config.cacheBlockSizeSpec,
      config.cacheNumBlocksSpec,
      ...(config.customMetrics ?? []).map((c) => c.metricSpec),
    ];
    this.customKeys = (config.customMetrics ?? []).map((c) => c.attributeKey);
    for (const [role, spec] of specs.entries()) this.addSpec(spec, role);
    this.values = new Float64Array(specs.length);
    this.found = new Uint8Array(specs.length);
  }

  private addSpec(spec: string | undefined, role: number): void {
    this.configured[role] = spec !== undefined;
    if (spec === undefined) return;
    const { name, matchers } = parseMetricSpec(spec);
    let index = this.names.indexOf(name);
    if (index < 0) {
      index = this.names.push(name) - 1;
      this.handlers.push([]);
    }
    this.handlers[index]!.push({ role, matchers });
  }

  /**
   * Writes what `text` holds into `metrics` (and custom metrics into `attributes`); fields whose
   * metric is absent keep their previous value. Returns the number of extract errors: required
   * metrics (queue, running, KV usage) that were configured but absent, plus malformed lines.
   */
  extract(text: string, metrics: EndpointMetrics, attributes: Map<string, unknown>): number {
    this.text = text;
    this.found.fill(0);
    this.values.fill(0);
    const malformed = scanSamples(text, this.names, this.onSample);
    const errors = malformed + this.commit(metrics, attributes);
    this.text = "";
    return errors;
  }

  private accept(nameIndex: number, start: number, end: number, value: number): void {
    if (Number.isNaN(value)) return;
    for (const handler of this.handlers[nameIndex]!) {
      if (handler.matchers.length > 0 && !labelsMatch(this.text, start, end, handler.matchers)) continue;
      this.record(handler.role, start, end, value);
    }
  }

  private record(role: number, start: number, end: number, value: number): void {
    const first = this.found[role] === 0;
    this.found[role] = 1;
    if (role === QUEUED || role === RUNNING) {
      this.values[role]! += value;
    } else if (role === LORA) {
      // The value is the sample's creation time: the newest sample wins.
      if (!first && value <= this.values[role]!) return;
      this.values[role] = value;
      this.loraStart = start;
      this.loraEnd = end;
    } else if (role === CACHE_INFO) {
      if (!first) return;
      this.cacheStart = start;
      this.cacheEnd = end;
    } else if (first || value > this.values[role]!) {
      this.values[role] = value;
    }
  }

  private commit(metrics: EndpointMetrics, attributes: Map<string, unknown>): number {
    const { found, values } = this;
    if (found[QUEUED]) metrics.waitingQueueSize = values[QUEUED]!;
    if (found[RUNNING]) metrics.runningRequestsSize = values[RUNNING]!;
    if (found[KV_USAGE]) metrics.kvCacheUsagePercent = values[KV_USAGE]!;
    if (found[BLOCK_SIZE]) metrics.cacheBlockSize = values[BLOCK_SIZE]!;
    if (found[NUM_BLOCKS]) metrics.cacheNumBlocks = values[NUM_BLOCKS]!;
    if (found[CACHE_INFO]) this.commitCacheInfo(metrics);
    if (found[LORA]) this.commitLora(metrics);
    for (let i = 0; i < this.customKeys.length; i++) {
      if (found[FIRST_CUSTOM + i]) attributes.set(this.customKeys[i]!, values[FIRST_CUSTOM + i]!);
    }
    let missing = 0;
    for (const role of REQUIRED) if (this.configured[role] && !found[role]) missing++;
    return missing;
  }

  private commitCacheInfo(metrics: EndpointMetrics): void {
    const blockSize = this.intLabel(this.cacheStart, this.cacheEnd, this.config.cacheBlockSizeLabelName);
    const numBlocks = this.intLabel(this.cacheStart, this.cacheEnd, this.config.cacheNumBlocksLabelName);
    if (blockSize !== undefined) metrics.cacheBlockSize = blockSize;
    if (numBlocks !== undefined) metrics.cacheNumBlocks = numBlocks;
  }

  private commitLora(metrics: EndpointMetrics): void {
    const { text, loraStart: start, loraEnd: end } = this;
    metrics.activeModels = splitList(readLabel(text, start, end, "running_lora_adapters"));
    metrics.waitingModels = splitList(readLabel(text, start, end, "waiting_lora_adapters"));
    metrics.maxActiveModels = this.intLabel(start, end, "max_lora") ?? 0;
  }

  private intLabel(start: number, end: number, label: string | undefined): number | undefined {
    if (label === undefined) return undefined;
    const value = Number.parseInt(readLabel(this.text, start, end, label) ?? "", 10);
    return Number.isFinite(value) ? value : undefined;
  }
}

function splitList(list: string | undefined): string[] {
  if (!list) return [];
  return list
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * Picks the extractor for an endpoint from its labels (llm-d's `engineLabelKey` / `defaultEngine`).
 * Unknown engine names fall back to the default engine. Throws on malformed specs.
 */
export function createExtractorSelector(
  options: MetricsExtractorOptions = {},
): (labels: Readonly<Record<string, string>>) => MetricsExtractor {
  const labelKey = options.engineLabelKey ?? ENGINE_LABEL;
  const byName = new Map<string, MetricsExtractor>();
  for (const config of [...BUILTIN_ENGINES, ...(options.engineConfigs ?? [])]) {
    byName.set(config.name, new MetricsExtractor(config));
  }
  const fallback = byName.get(options.defaultEngine ?? DEFAULT_ENGINE) ?? byName.get(DEFAULT_ENGINE)!;
  return (labels) => byName.get(labels[labelKey] ?? "") ?? fallback;
}
