/**
 * The router's live set of model-server endpoints: discovery (static list or watched file),
 * metrics scraping on a fast interval, health, `/v1/models` polling and staleness. The gateway
 * reads `candidates()` per request; the scheduler plugins read each endpoint's metrics.
 */
import type { Endpoint, EndpointMetadata } from "./endpoint.ts";
import { HttpFetcher } from "./http-fetcher.ts";
import { createExtractorSelector, type MetricsExtractor } from "./metrics-extractor.ts";
import { type EndpointPoolOptions, type ResolvedPoolOptions, resolvePoolOptions } from "./pool-options.ts";
import { EndpointRecord, endpointBaseUrl, type PooledEndpoint, sameMetadata } from "./pooled-endpoint.ts";
import { parseServedModels, sameModels } from "./served-models.ts";

export type { EndpointPoolOptions } from "./pool-options.ts";
export type { EndpointHealth, EndpointStatus, PooledEndpoint } from "./pooled-endpoint.ts";

/** Pool-wide counters for the gateway's Prometheus export (monotonic). */
export interface EndpointPoolCounters {
  /** Failed scrapes / health probes (llm-d `datalayer_poll_errors_total`). */
  pollErrorsTotal: number;
  /** Pages missing required metrics or with malformed lines (llm-d `datalayer_extract_errors_total`). */
  extractErrorsTotal: number;
  /** Successful scrapes / health probes. */
  scrapesTotal: number;
  /** Failed `/v1/models` polls. */
  modelsPollErrorsTotal: number;
}

/** Bound on the per-model candidate cache, so arbitrary client model names cannot grow it. */
const MODEL_CACHE_LIMIT = 256;

/** See the module comment. Create, `start()`, read; `stop()` when done. */
export class EndpointPool {
  private readonly options: ResolvedPoolOptions;
  private readonly fetcher: HttpFetcher;
  private readonly selectExtractor: (labels: Readonly<Record<string, string>>) => MetricsExtractor;
  private readonly records = new Map<string, EndpointRecord>();
  private readonly listeners: (() => void)[] = [];
  private readonly counterValues: EndpointPoolCounters = {
    pollErrorsTotal: 0,
    extractErrorsTotal: 0,
    scrapesTotal: 0,
    modelsPollErrorsTotal: 0,
  };
  private allCache: PooledEndpoint[] | undefined;
  private readyCache: PooledEndpoint[] | undefined;
  private modelsCache: string[] | undefined;
  private readonly byModelCache = new Map<string, PooledEndpoint[]>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  /** Validates options and compiles metric specs (throws on malformed specs); starts nothing. */
  constructor(options: EndpointPoolOptions) {
    this.options = resolvePoolOptions(options);
    this.fetcher = new HttpFetcher({ timeoutMs: this.options.requestTimeoutMs });
    this.selectExtractor = createExtractorSelector(this.options.metricsSpecs);
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
    const pending = [...this.records.values()].flatMap((r) => [r.scrapeInFlight, r.modelsInFlight]);
    await Promise.all(pending);
    await this.fetcher.close();
  }

  /** Scrapes every endpoint and polls its models now; resolves when all have landed or failed. */
  async refresh(): Promise<void> {
    const work: Promise<void>[] = [];
    for (const record of this.records.values()) {
      work.push(this.scrape(record));
      if (this.options.modelsIntervalMs > 0) work.push(this.pollModels(record));
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
    if (!record) return;
    record.failEpoch++;
    this.setHealth(record, "unhealthy", "marked failed by the proxy");
  }

  /** True when `key` is unknown, never scraped, or its metrics are older than the staleness threshold. */
  isStale(key: string): boolean {
    const updatedAt = this.records.get(key)?.metrics.updatedAtMs ?? 0;
    return updatedAt === 0 || this.options.clock.now() - updatedAt > this.options.stalenessThresholdMs;
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

  /** Snapshot of the pool-wide counters. */
  counters(): Readonly<EndpointPoolCounters> {
    return { ...this.counterValues };
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
      if (this.timer) void this.scrape(record);
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
      if (!record.scrapeInFlight) void this.scrape(record);
      if (modelsInterval > 0 && !record.modelsInFlight && now - record.lastModelsPollMs >= modelsInterval) {
        void this.pollModels(record);
      }
    }
  }

  private scrape(record: EndpointRecord): Promise<void> {
    record.scrapeInFlight ??= this.runScrape(record).finally(() => {
      record.scrapeInFlight = undefined;
    });
    return record.scrapeInFlight;
  }

  private async runScrape(record: EndpointRecord): Promise<void> {
    const { metricsPath, healthPath, clock } = this.options;
    const epoch = record.failEpoch;
    const outcome = await this.fetcher.getText(record.baseUrl + (metricsPath || healthPath));
    if (this.records.get(record.metadata.key) !== record) return;
    if (!outcome.ok) return this.probeFailed(record, outcome.error);
    if (metricsPath) {
      const errors = record.extractor.extract(outcome.body, record.metrics, record.attributes);
      record.status.extractErrors += errors;
      this.counterValues.extractErrorsTotal += errors;
    }
    record.metrics.updatedAtMs = clock.now();
    record.metrics.dispatchedSinceScrape = 0;
    record.status.scrapes++;
    this.counterValues.scrapesTotal++;
    record.status.consecutiveFailures = 0;
    record.status.lastError = undefined;
    if (epoch === record.failEpoch) this.setHealth(record, "ready", "probe succeeded");
  }

  private probeFailed(record: EndpointRecord, error: string): void {
    const { status } = record;
    status.pollErrors++;
    this.counterValues.pollErrorsTotal++;
    status.consecutiveFailures++;
    status.lastError = error;
    if (status.health === "ready" && status.consecutiveFailures >= this.options.unhealthyAfterFailures) {
      this.setHealth(record, "unhealthy", error);
    }
  }

  private pollModels(record: EndpointRecord): Promise<void> {
    record.lastModelsPollMs = this.options.clock.now();
    record.modelsInFlight ??= this.runModelsPoll(record).finally(() => {
      record.modelsInFlight = undefined;
    });
    return record.modelsInFlight;
  }

  private async runModelsPoll(record: EndpointRecord): Promise<void> {
    const outcome = await this.fetcher.getText(
      `${endpointBaseUrl(record.metadata, this.options.scheme)}/v1/models`,
    );
    if (this.records.get(record.metadata.key) !== record) return;
    const models = outcome.ok ? parseServedModels(outcome.body) : undefined;
    if (models === undefined) {
      this.counterValues.modelsPollErrorsTotal++;
      return;
    }
    if (sameModels(models, record.status.servedModels)) return;
    record.status.servedModels = models;
    this.changed();
  }

  private setHealth(record: EndpointRecord, health: EndpointRecord["status"]["health"], why: string): void {
    const previous = record.status.health;
    if (previous === health) return;
    record.status.health = health;
    const level = health === "ready" ? "info" : "warn";
    this.options.log(level, `${record.metadata.key} ${previous} -> ${health} (${why})`);
    this.changed();
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
