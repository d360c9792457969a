/**
 * Probing of single endpoints: metrics scrapes (or health probes), `/v1/models` polls and the
 * health state machine they drive. Never more than one scrape and one poll in flight per endpoint.
 */
import { HttpFetcher } from "./http-fetcher.ts";
import type { ResolvedPoolOptions } from "./pool-options.ts";
import { type EndpointHealth, type EndpointRecord, endpointBaseUrl } from "./pooled-endpoint.ts";
import { parseServedModels, sameModels } from "./served-models.ts";

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

/** What the prober tells its pool. */
export interface ProberHooks {
  /** False once the record was removed or replaced: its late results are dropped. */
  isCurrent(record: EndpointRecord): boolean;
  /** Health or served models of `record` changed. */
  changed(record: EndpointRecord): void;
}

/** See the module comment. */
export class EndpointProber {
  readonly counters: EndpointPoolCounters = {
    pollErrorsTotal: 0,
    extractErrorsTotal: 0,
    scrapesTotal: 0,
    modelsPollErrorsTotal: 0,
  };
  private readonly fetcher: HttpFetcher;

  constructor(
    private readonly options: ResolvedPoolOptions,
    private readonly hooks: ProberHooks,
  ) {
    this.fetcher = new HttpFetcher({
      timeoutMs: options.requestTimeoutMs,
      insecureSkipVerify: options.insecureSkipVerify,
      ...(options.tlsFiles ? { tlsFiles: options.tlsFiles } : {}),
    });
  }

  /** Scrapes `record` unless a scrape is under way, in which case it returns that one. */
  scrape(record: EndpointRecord): Promise<void> {
    record.scrapeInFlight ??= this.runScrape(record).finally(() => {
      record.scrapeInFlight = undefined;
    });
    return record.scrapeInFlight;
  }

  /** Polls `/v1/models` of `record` unless a poll is under way. */
  pollModels(record: EndpointRecord): Promise<void> {
    record.lastModelsPollMs = this.options.clock.now();
    record.modelsInFlight ??= this.runModelsPoll(record).finally(() => {
      record.modelsInFlight = undefined;
    });
    return record.modelsInFlight;
  }

  /** Takes `record` out now; scrapes started before this call cannot bring it back. */
  markFailed(record: EndpointRecord): void {
    record.failEpoch++;
    this.setHealth(record, "unhealthy", "marked failed by the proxy");
  }

  /**
   * Takes `record` out while it drains: successful probes (a draining server still answers them)
   * keep it out; the first failed one (it exited) turns it `unhealthy`, so the next success (the
   * restarted server) brings it back.
   */
  markDraining(record: EndpointRecord): void {
    record.failEpoch++;
    this.setHealth(record, "draining", "the endpoint is shutting down");
  }

  /** Waits for probes under way, then closes connections. */
  async close(records: Iterable<EndpointRecord>): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const r of records) {
      if (r.scrapeInFlight) pending.push(r.scrapeInFlight);
      if (r.modelsInFlight) pending.push(r.modelsInFlight);
    }
    await Promise.all(pending);
    await this.fetcher.close();
  }

  private async runScrape(record: EndpointRecord): Promise<void> {
    const { metricsPath, healthPath, clock } = this.options;
    const epoch = record.failEpoch;
    // Only dispatches made before the page was requested can be on it; later ones stay counted.
    const dispatchedBefore = record.metrics.dispatchedSinceScrape;
    const outcome = await this.fetcher.getText(record.baseUrl, metricsPath || healthPath);
    if (!this.hooks.isCurrent(record)) return;
    if (!outcome.ok) return this.probeFailed(record, outcome.error);
    if (metricsPath) {
      const errors = record.extractor.extract(outcome.body, record.metrics, record.attributes);
      record.status.extractErrors += errors;
      this.counters.extractErrorsTotal += errors;
    }
    record.metrics.updatedAtMs = clock.now();
    record.metrics.dispatchedSinceScrape = Math.max(
      0,
      record.metrics.dispatchedSinceScrape - dispatchedBefore,
    );
    record.status.scrapes++;
    this.counters.scrapesTotal++;
    record.status.consecutiveFailures = 0;
    record.status.lastError = undefined;
    if (epoch === record.failEpoch && record.status.health !== "draining") {
      this.setHealth(record, "ready", "probe succeeded");
    }
  }

  private probeFailed(record: EndpointRecord, error: string): void {
    const { status } = record;
    status.pollErrors++;
    this.counters.pollErrorsTotal++;
    status.consecutiveFailures++;
    status.lastError = error;
    if (status.health === "draining")
      this.setHealth(record, "unhealthy", `went away while draining: ${error}`);
    else if (status.health === "ready" && status.consecutiveFailures >= this.options.unhealthyAfterFailures) {
      this.setHealth(record, "unhealthy", error);
    }
  }

  private async runModelsPoll(record: EndpointRecord): Promise<void> {
    const origin = endpointBaseUrl(record.metadata, this.options.scheme);
    const outcome = await this.fetcher.getText(origin, "/v1/models");
    if (!this.hooks.isCurrent(record)) return;
    const models = outcome.ok ? parseServedModels(outcome.body) : undefined;
    if (models === undefined) {
      this.counters.modelsPollErrorsTotal++;
      return;
    }
    if (sameModels(models, record.status.servedModels)) return;
    record.status.servedModels = models;
    this.hooks.changed(record);
  }

  private setHealth(record: EndpointRecord, health: EndpointHealth, why: string): void {
    const previous = record.status.health;
    if (previous === health) return;
    record.status.health = health;
    this.options.log(
      health === "ready" ? "info" : "warn",
      `${record.metadata.key} ${previous} -> ${health} (${why})`,
    );
    this.hooks.changed(record);
  }
}
