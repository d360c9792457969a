/**
 * Polling of data sources other than the engine's own `/metrics` (llm-d's `dcgm-data-source`):
 * each source GETs one page per endpoint on its own port, path and interval, and its extractors
 * turn the page into endpoint attributes. A failed poll leaves the attributes as they were and
 * never touches the endpoint's health, which only its engine decides.
 */
import type { EndpointMetadata } from "./endpoint.ts";
import { HttpFetcher } from "./http-fetcher.ts";
import { endpointBaseUrl } from "./pooled-endpoint.ts";

/** Reads one fetched page into an endpoint's attributes; returns its extract errors. */
export type AttributeExtract = (
  text: string,
  endpoint: EndpointMetadata,
  attributes: Map<string, unknown>,
) => number;

/** One extra source as the pool runs it. */
export interface AttributeSource {
  /** Instance name (diagnostics). */
  name: string;
  scheme: "http" | "https";
  path: string;
  /** Port of the page on each endpoint's address (a sidecar exporter's). */
  port: number;
  insecureSkipVerify: boolean;
  /** Poll period in ms; absent = every pool tick. */
  intervalMs?: number;
  /** The source's wired extractors, run in order on each page. */
  extractors: readonly AttributeExtract[];
}

/** What an {@link AttributePoller} polls: an endpoint's identity and its attribute map. */
export interface AttributeTarget {
  readonly metadata: EndpointMetadata;
  readonly attributes: Map<string, unknown>;
}

/** Poll counters of one source (monotonic). */
export interface AttributePollCounters {
  polls: number;
  pollErrors: number;
  extractErrors: number;
}

interface TargetState {
  lastPollMs: number;
  inFlight: Promise<void> | undefined;
}

/** Runs one {@link AttributeSource} over the pool's endpoints. */
export class AttributePoller {
  readonly counters: AttributePollCounters = { polls: 0, pollErrors: 0, extractErrors: 0 };
  private readonly fetcher: HttpFetcher;
  private readonly state = new WeakMap<AttributeTarget, TargetState>();

  constructor(
    readonly source: AttributeSource,
    timeoutMs: number,
  ) {
    this.fetcher = new HttpFetcher({ timeoutMs, insecureSkipVerify: source.insecureSkipVerify });
  }

  /** Polls every target whose interval has passed and that has no poll under way. */
  tick(targets: Iterable<AttributeTarget>, nowMs: number): void {
    for (const target of targets) {
      const state = this.stateOf(target);
      if (state.inFlight || nowMs - state.lastPollMs < (this.source.intervalMs ?? 0)) continue;
      void this.poll(target, nowMs);
    }
  }

  /** Polls `target` now (or joins the poll under way); resolves when it has landed or failed. */
  poll(target: AttributeTarget, nowMs: number): Promise<void> {
    const state = this.stateOf(target);
    state.lastPollMs = nowMs;
    state.inFlight ??= this.run(target).finally(() => {
      state.inFlight = undefined;
    });
    return state.inFlight;
  }

  /** Closes connections once the polls under way have landed. */
  async close(targets: Iterable<AttributeTarget>): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const t of targets) {
      const inFlight = this.state.get(t)?.inFlight;
      if (inFlight) pending.push(inFlight);
    }
    await Promise.all(pending);
    await this.fetcher.close();
  }

  private stateOf(target: AttributeTarget): TargetState {
    let state = this.state.get(target);
    if (!state) {
      state = { lastPollMs: Number.NEGATIVE_INFINITY, inFlight: undefined };
      this.state.set(target, state);
    }
    return state;
  }

  private async run(target: AttributeTarget): Promise<void> {
    const { scheme, port, path, extractors } = this.source;
    const outcome = await this.fetcher.getText(endpointBaseUrl(target.metadata, scheme, port), path);
    this.counters.polls++;
    if (!outcome.ok) {
      this.counters.pollErrors++;
      return;
    }
    for (const extract of extractors)
      this.counters.extractErrors += extract(outcome.body, target.metadata, target.attributes);
  }
}
