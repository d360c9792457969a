/**
 * What one batch step computes, in reusable buffers: the scheduler fills it, a timing model prices it.
 * One instance per engine, reset every step, so pricing allocates nothing.
 */
export class StepShape {
  /** Prefill chunks this step. */
  prefillCount = 0;
  /** New tokens of chunk i. */
  prefillNew: Float64Array;
  /** Tokens already in KV (cached or computed earlier) before chunk i. */
  prefillPast: Float64Array;
  /** 1 when chunk i is the first of its (re)prefill, i.e. it starts right after the cache lookup. */
  prefillFirst: Uint8Array;
  /** 1 when chunk i completes its prompt (the step emits its first token). */
  prefillLast: Uint8Array;
  /** Sequences decoding one token. */
  decodeCount = 0;
  /** Sum of their context lengths (tokens attended, including the new one). */
  decodeContextSum = 0;
  /** Bytes reloaded from the CPU tier / the storage tier this step. */
  cpuReloadBytes = 0;
  storageReloadBytes = 0;
  /** Requests running after scheduling (for load-dependent models). */
  running = 0;

  constructor(capacity: number) {
    this.prefillNew = new Float64Array(capacity);
    this.prefillPast = new Float64Array(capacity);
    this.prefillFirst = new Uint8Array(capacity);
    this.prefillLast = new Uint8Array(capacity);
  }

  /** Clears counters; buffers are overwritten as chunks are added. */
  reset(): void {
    this.prefillCount = 0;
    this.decodeCount = 0;
    this.decodeContextSum = 0;
    this.cpuReloadBytes = 0;
    this.storageReloadBytes = 0;
    this.running = 0;
  }

  /** Records a prefill chunk of `n` new tokens after `past` tokens. */
  addPrefill(n: number, past: number, first: boolean, last: boolean): void {
    const i = this.prefillCount++;
    this.prefillNew[i] = n;
    this.prefillPast[i] = past;
    this.prefillFirst[i] = first ? 1 : 0;
    this.prefillLast[i] = last ? 1 : 0;
  }

  /** Records one decoding sequence whose context (with the new token) is `context` tokens. */
  addDecode(context: number): void {
    this.decodeCount++;
    this.decodeContextSum += context;
  }

  /** New prefill tokens across all chunks. */
  prefillTokens(): number {
    let t = 0;
    for (let i = 0; i < this.prefillCount; i++) t += this.prefillNew[i]!;
    return t;
  }

  /** Total tokens in the batch (prefill chunks + one per decode). */
  batchTokens(): number {
    return this.prefillTokens() + this.decodeCount;
  }
}
