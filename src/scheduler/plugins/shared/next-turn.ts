/**
 * A producer's yield to the event loop on a long prompt, so the work after it (the next producer, the
 * filters, scorers and pre-request hooks) starts an event-loop block of its own. Live hosts only:
 * the fleet simulator starts no plugin and decides synchronously.
 */

/** Prompt tokens from which a started producer yields after its work (≈ 500 blocks of 64). */
const YIELD_TOKENS = 32_768;

/**
 * What a started producer returns after its work on a prompt of `tokens`: a promise of the event
 * loop's next turn (after the I/O already waiting) when the prompt is long, else nothing.
 */
export function yieldAfter(tokens: Uint32Array | undefined): Promise<void> | undefined {
  if ((tokens?.length ?? 0) < YIELD_TOKENS) return undefined;
  return new Promise((resolve) => setImmediate(resolve));
}
