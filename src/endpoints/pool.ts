/**
 * The router's live set of model-server endpoints: discovery (static list or watched file),
 * metrics scraping on a fast interval, health, `/v1/models` polling and staleness. The gateway
 * reads `candidates()` per request; the scheduler plugins read each endpoint's metrics.
 */
import { AttributePoller } from "./attribute-poller.ts";
import type { Endpoint, EndpointMetadata } from "./endpoint.ts";
import { type EndpointPoolCounters, EndpointProber } from "./endpoint-prober.ts";
import { createExtractorSelector, type MetricsExtractor } from "./metrics-extractor.ts";
import { type EndpointPoolOptions, type ResolvedPoolOptions, resolvePoolOptions } from "./pool-options.ts";
import { EndpointRecord, endpointBaseUrl, type PooledEndpoint, sameMetadata } from "./pooled-endpoint.ts";

export type { EndpointPoolCounters } from "./endpoint-prober.ts";
export type { EndpointPoolOptions } from "./pool-options.ts";
export type { EndpointHealth, EndpointStatus, PooledEndpoint } from "./pooled-endpoint.ts";

/** Bound on the per-model candidate cache, so arbitrary client model names cannot grow it. */
const MODEL_CACHE_LIMIT = 256;

/** See the module comment. Create, `start()`, read; `stop()` when done. */
export class EndpointPool {
  private readonly options: ResolvedPoolOptions;
  private readonly prober: EndpointProber;
  private readonly attributePollers: AttributePoller[];
  private readonly selectExtractor: (labels: Readonly<Record<string, string>>) => MetricsExtractor;
  private readonly records = new Map<string, EndpointRecord>();
  private readonly listeners: (() => void)[] = [];
  private allCache: PooledEndpoint[] | undefined;
  private readyCache: PooledEndpoint[] | undefined;
  private modelsCache: string[] | undefined;
  private readonly byModelCache = new Map<string, PooledEndpoint[]>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  /** Validates options and compiles metric specs (throws on malformed specs); starts nothing. */
  constructor(options: EndpointPoolOptions) {
    this.options = resolvePoolOptions(options);
    this.prober = new EndpointProber(this.options, {
      isCurrent: (record) => this.records.get(record.metadata.key) === record,
      changed: () => this.changed(),
    });
    this.selectExtractor = createExtractorSelector(this.options.metricsSpecs);
    this.attributePollers = this.options.attributeSources.map(
      (source) => new AttributePoller(source, this.options.requestTimeoutMs),
    );
  }

  /** Runs the first discovery and the first scrape of every endpoint (each may fail), then the timer. */
  async start(): Promise<void> {
    this.running = true;
    await this.options.source.start((set) => this.applySet(set));
    await this.refresh();
    const interval = this.options.scrapeIntervalMs;
    if (interval > 0 && this.running) {
      this.timer = setInterval(() => this.tick(), interval);
      this.timer.unref();
    }
  }

  /** Stops discovery and polling and waits for requests under way; the pool keeps its last state. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.timer);
    await this.options.source.stop();
    await this.prober.close(this.records.values());
    await Promise.all(this.attributePollers.map((p) => p.close(this.records.values())));
  }

  /** Scrapes every endpoint, polls its models and attribute sources now; resolves when all have landed or failed. */
  async refresh(): Promise<void> {
    const work: Promise<void>[] = [];
    const now = this.options.clock.now();
    for (const record of this.records.values()) {
      work.push(this.prober.scrape(record));
      if (this.options.modelsIntervalMs > 0) work.push(this.prober.pollModels(record));
      for (const poller of this.attributePollers) work.push(poller.poll(record, now));
    }
    await Promise.all(work);
  }

  /** Ready endpoints (healthy, probed at least once), filtered by served model when known. */
  candidates(model?: string): readonly Endpoint[] {
    this.readyCache ??= this.all().filter((e) => e.status.health === "ready");
    if (model === undefined) return this.readyCache;
    let list = this.byModelCache.get(model);
    if (list === undefined) {
      list = this.readyCache.filter((e) => servesModel(e, model));
      if (this.byModelCache.size >= MODEL_CACHE_LIMIT) this.byModelCache.clear();
      this.byModelCache.set(model, list);
    }
    return list;
  }

  /** Every known endpoint with its status, in discovery order. */
  all(): readonly PooledEndpoint[] {
    this.allCache ??= [...this.records.values()];
    return this.allCache;
  }

  /** The endpoint with this key, whatever its health. */
  get(key: string): PooledEndpoint | undefined {
    return this.records.get(key);
  }

  /** Counts one request dispatched to `key` since its last scrape (reset when a scrape lands). */
  noteDispatched(key: string): void {
    const record = this.records.get(key);
    if (record) record.metrics.dispatchedSinceScrape++;
  }

  /** The proxy could not reach `key`: out of the candidates until a probe started later succeeds. */
  markFailed(key: string): void {
    const record = this.records.get(key);
    if (record) this.prober.markFailed(record);
  }

  /** `key` answered that it is shutting down: out of the candidates until it restarts (see `EndpointHealth`). */
  markDraining(key: string): void {
    const record = this.records.get(key);
    if (record) this.prober.markDraining(record);
  }

  /** True when `key` is unknown, never scraped, or its metrics are older than the staleness threshold. */
  isStale(key: string): boolean {
    const record = this.records.get(key);
    if (!record || record.status.scrapes === 0) return true;
    return this.options.clock.now() - record.metrics.updatedAtMs > this.options.stalenessThresholdMs;
  }

  /** `fn` runs after the endpoint set, a health state or a served-model list changes. */
  on(event: "change", fn: () => void): void {
    if (event === "change") this.listeners.push(fn);
  }

  /** Sorted union of the models served by ready endpoints (for `/v1/models` aggregation). */
  models(): string[] {
    if (this.modelsCache === undefined) {
      const ids = new Set<string>();
      for (const e of this.candidates())
        for (const id of (e as PooledEndpoint).status.servedModels ?? []) ids.add(id);
      this.modelsCache = [...ids].sort();
    }
    return this.modelsCache;
  }

  /** Snapshot of the pool-wide counters (attribute sources' poll and extract errors included). */
  counters(): Readonly<EndpointPoolCounters> {
    const counters = { ...this.prober.counters };
    for (const { counters: c } of this.attributePollers) {
      counters.pollErrorsTotal += c.pollErrors;
      counters.extractErrorsTotal += c.extractErrors;
    }
    return counters;
  }

  private applySet(set: readonly EndpointMetadata[]): void {
    const wanted = new Map(set.map((m) => [m.key, m]));
    let changed = false;
    for (const [key, record] of this.records) {
      const next = wanted.get(key);
      if (next && sameMetadata(next, record.metadata)) continue;
      this.records.delete(key);
      changed = true;
    }
    for (const metadata of set) {
      if (this.records.has(metadata.key)) continue;
      const record = this.createRecord(metadata);
      this.records.set(metadata.key, record);
      changed = true;
      if (this.timer) void this.prober.scrape(record);
    }
    if (changed) this.changed();
  }

  private createRecord(metadata: EndpointMetadata): EndpointRecord {
    const { scheme, metricsPort } = this.options;
    return new EndpointRecord(
      metadata,
      this.selectExtractor(metadata.labels),
      endpointBaseUrl(metadata, scheme, metricsPort),
    );
  }

  private tick(): void {
    const now = this.options.clock.now();
    const modelsInterval = this.options.modelsIntervalMs;
    for (const record of this.records.values()) {
      if (!record.scrapeInFlight) void this.prober.scrape(record);
      if (modelsInterval > 0 && !record.modelsInFlight && now - record.lastModelsPollMs >= modelsInterval) {
        void this.prober.pollModels(record);
      }
    }
    for (const poller of this.attributePollers) poller.tick(this.records.values(), now);
  }

  private changed(): void {
    this.allCache = undefined;
    this.readyCache = undefined;
    this.modelsCache = undefined;
    this.byModelCache.clear();
    for (const fn of this.listeners) {
      try {
        fn();
      } catch (err) {
        this.options.log(
          "warn",
          `change listener failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
  }
}

/** Unknown model lists never exclude an endpoint: only a known list without the model does. */
function servesModel(endpoint: PooledEndpoint, model: string): boolean {
  const served = endpoint.status.servedModels;
  if (served === undefined || served.includes(model)) return true;
  return endpoint.metrics.activeModels.includes(model) || endpoint.metrics.waitingModels.includes(model);
}
