/**
 * What an engine's answer says about the approximate index's guess (`learnCapacityFromCachedTokens`):
 * `usage.prompt_tokens_details.cached_tokens` is the prefix the engine really reused, from any
 * tier (vLLM counts GPU and offloaded hits alike). Compared with the match the index predicted for
 * that endpoint, as fractions of the prompt (so the router's and the engine's tokenizers need not
 * agree):
 * - the engine reused at least a block more than predicted: it keeps more than the index's LRU
 *   models (a CPU or storage tier, or more KV than scraped), so that endpoint's capacity grows;
 * - at least a block less: it holds less than it was sent (evicted sooner), so it shrinks.
 * Each answer moves an endpoint's capacity scale by one step, within bounds.
 */

/** Factor by which one answer grows or shrinks an endpoint's capacity. */
export const CAPACITY_STEP = 1.05;
/** Bounds of the learned scale (on the configured or scraped capacity). */
export const MIN_CAPACITY_SCALE = 1 / 8;
export const MAX_CAPACITY_SCALE = 8;

/** One answer, as fractions of the prompt. */
export interface CachedTokensObservation {
  /** Prompt fraction the index predicted cached on the endpoint (matched blocks × block size / prompt). */
  predicted: number;
  /** Prompt fraction the engine reported cached (`cached_tokens / prompt_tokens`). */
  observed: number;
  /** One index block as a prompt fraction: the smallest difference that counts. */
  block: number;
}

/** Per-endpoint capacity scales learned from answers (1 until an answer moves them). */
export class CachedTokensFeedback {
  private readonly scales = new Map<string, number>();

  /** The scale of `endpointKey`'s capacity. */
  scale(endpointKey: string): number {
    return this.scales.get(endpointKey) ?? 1;
  }

  /** Learns from one answer; returns the new scale when it moved, else undefined. */
  observe(endpointKey: string, o: CachedTokensObservation): number | undefined {
    const before = this.scale(endpointKey);
    let after = before;
    if (o.observed >= o.predicted + o.block) after = Math.min(MAX_CAPACITY_SCALE, before * CAPACITY_STEP);
    else if (o.observed <= o.predicted - o.block)
      after = Math.max(MIN_CAPACITY_SCALE, before / CAPACITY_STEP);
    if (after === before) return undefined;
    this.scales.set(endpointKey, after);
    return after;
  }
}
