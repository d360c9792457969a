/**
 * Shared-prefix generator (inference-perf `shared_prefix`, llm-d's "b2b-saas" guide): G groups ×
 * P prompts; each group has a system prompt, each prompt a fixed question; Poisson arrivals pick a
 * (group, prompt) uniformly, so repeats of one pair share the whole prompt.
 */
import { Rng } from "./rng.ts";
import { type Arrival, blockSegments, makeRequest, type Workload } from "./types.ts";

/** Parameters (defaults are llm-d's `guide_precise-prefix-cache-routing_1`). */
export interface SharedPrefixOptions {
  groups: number;
  promptsPerGroup: number;
  systemTokens: number;
  questionTokens: number;
  outputTokens: number;
  /** Poisson arrival rate, requests per second. */
  rps: number;
  /** No arrivals at or after this time, ms. */
  durationMs: number;
  seed: number;
}

/** Open-loop shared-prefix workload. */
export class SharedPrefixWorkload implements Workload {
  readonly name = "shared-prefix";
  private readonly rng: Rng;
  private atMs = 0;
  private count = 0;

  constructor(private readonly options: SharedPrefixOptions) {
    this.rng = new Rng(`shared-prefix:${options.seed}`);
  }

  nextArrival(): Arrival | undefined {
    const o = this.options;
    this.atMs += this.rng.exponential(1000 / o.rps);
    if (this.atMs >= o.durationMs) return undefined;
    const group = this.rng.int(o.groups);
    const prompt = this.rng.int(o.promptsPerGroup);
    const segments = [
      ...blockSegments(`sp:sys:${group}`, 0, o.systemTokens, 64),
      ...blockSegments(`sp:q:${group}:${prompt}`, 0, o.questionTokens, 64),
    ];
    const request = makeRequest(`sp-${this.count++}`, segments, o.outputTokens, { kind: `group-${group}` });
    return { atMs: this.atMs, request };
  }

  onComplete(): Arrival[] {
    return [];
  }
}
