/**
 * A producer's yield to the event loop on a long prompt, so the work after it (the next producer, the
 * filters, scorers and pre-request hooks) starts an event-loop block of its own. Live hosts only:
 * the fleet simulator starts no plugin and decides synchronously.
 */

/** Prompt tokens from which a started producer yields after its work (≈ 500 blocks of 64). */
export const YIELD_TOKENS = 32_768;

/**
 * What a started producer returns after its work on `tokens` of a prompt: a promise of the event
 * loop's next turn (after the I/O already waiting) when they are many, else nothing.
 */
export function yieldAfter(tokens: number): Promise<void> | undefined {
  return tokens < YIELD_TOKENS ? undefined : nextTurn();
}

/** The event loop's next turn, after the I/O already waiting. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
