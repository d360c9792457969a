/**
 * The time to first token a request gets alone on an idle engine: its uncached tokens prefilled in
 * chunks of the step budget, nothing batched beside them. No placement or schedule can serve the
 * request sooner, so a run's percentiles of it are the floor its TTFT percentiles sit on.
 */
import type { ResolvedEngineOptions } from "./options.ts";
import { StepShape } from "./step-shape.ts";
import type { TimingModel } from "./timing.ts";

/** Prices prefills alone on an idle engine of the given options and timing model. */
export class IdleTtft {
  private readonly shape = new StepShape(1);
  private readonly chunkTokens: number;

  constructor(
    options: Pick<ResolvedEngineOptions, "maxNumBatchedTokens" | "longPrefillTokenThreshold">,
    private readonly timing: TimingModel,
  ) {
    const cap = options.longPrefillTokenThreshold;
    this.chunkTokens = cap > 0 ? Math.min(cap, options.maxNumBatchedTokens) : options.maxNumBatchedTokens;
  }

  /** ms from scheduling to the first token of a `promptTokens` prompt with `cachedTokens` cached (the last token is always computed). */
  ms(promptTokens: number, cachedTokens: number): number {
    const start = Math.max(0, Math.min(cachedTokens, promptTokens - 1));
    let total = 0;
    for (let past = start; past < promptTokens; ) {
      const n = Math.min(this.chunkTokens, promptTokens - past);
      this.shape.reset();
      this.shape.addPrefill(n, past, past === start, past + n === promptTokens);
      this.shape.running = 1;
      total += this.timing.stepMs(this.shape);
      past += n;
    }
    return total;
  }
}
