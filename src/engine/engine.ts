/**
 * The engine core: one vLLM replica in virtual or wall time. Ties the scheduler, the KV manager and the
 * timing model together behind the {@link Engine} contract (see types.ts for the driving loop).
 */
import { blockHashes, chainSeed } from "./block-hash.ts";
import type { BlockCounts } from "./block-pool.ts";
import { KvManager } from "./kv-manager.ts";
import type { ResolvedEngineOptions } from "./options.ts";
import { BatchScheduler } from "./scheduler.ts";
import { Sequence } from "./sequence.ts";
import { StepShape } from "./step-shape.ts";
import { createTimingModel, type TimingModel } from "./timing.ts";
import type {
  AddRejection,
  Engine,
  EngineRequest,
  EngineStats,
  KvEvent,
  StepOutput,
  StepResult,
} from "./types.ts";

/** The paged-KV, continuously batching engine. */
export class PagedEngine implements Engine {
  readonly options: ResolvedEngineOptions;
  private readonly kv: KvManager;
  private readonly scheduler: BatchScheduler;
  private readonly timing: TimingModel;
  private readonly shape: StepShape;
  private readonly live = new Map<string, Sequence>();
  /** Finished `holdKvOnFinish` requests whose blocks wait for a remote decode. */
  private readonly held = new Map<string, Sequence>();
  private heldBlockCount = 0;
  /** Longest prompt + output accepted: the model window, or the whole GPU cache if smaller. */
  private readonly maxLen: number;
  private promptTokens = 0;
  private generationTokens = 0;

  constructor(options: ResolvedEngineOptions) {
    this.options = options;
    this.kv = new KvManager(options);
    this.scheduler = new BatchScheduler(this.kv, options);
    this.timing = createTimingModel(options);
    this.shape = new StepShape(options.maxNumSeqs);
    this.maxLen = Math.min(options.maxModelLen, options.numGpuBlocks * options.blockSize);
  }

  add(req: EngineRequest, _nowMs: number): AddRejection | null {
    if (this.live.has(req.id) || this.held.has(req.id)) return { reason: "duplicate-id" };
    if (req.promptTokens.length + Math.max(1, req.maxTokens) > this.maxLen) {
      return { reason: "too-long", maxModelLen: this.maxLen };
    }
    const seed = chainSeed(req.lora, req.cacheSalt);
    const hashes = this.options.enablePrefixCaching
      ? blockHashes(req.promptTokens, this.options.blockSize, seed)
      : new Float64Array(0);
    const s = new Sequence(req, hashes);
    this.live.set(s.id, s);
    this.scheduler.enqueue(s);
    return null;
  }

  abort(id: string): boolean {
    if (this.releaseHeld(id)) return true;
    const s = this.live.get(id);
    if (!s) return false;
    this.live.delete(id);
    this.scheduler.forget(s);
    this.kv.free(s);
    this.kv.events.flush();
    return true;
  }

  cachedPrefixTokens(req: Pick<EngineRequest, "promptTokens" | "lora" | "cacheSalt">): number {
    if (!this.options.enablePrefixCaching) return 0;
    const B = this.options.blockSize;
    const hashes = blockHashes(req.promptTokens, B, chainSeed(req.lora, req.cacheSalt));
    const maxHit = Math.min(hashes.length, Math.floor((req.promptTokens.length - 1) / B));
    let hits = 0;
    while (hits < maxHit && this.kv.pool.lookup(hashes[hits]!) >= 0) hits++;
    return hits * B;
  }

  heldBlockIds(id: string): readonly number[] | undefined {
    return this.held.get(id)?.blocks;
  }

  releaseHeld(id: string): boolean {
    const s = this.held.get(id);
    if (!s) return false;
    this.held.delete(id);
    this.heldBlockCount -= s.blocks.length;
    this.kv.free(s);
    this.kv.events.flush();
    return true;
  }

  step(nowMs: number): StepResult | null {
    if (!this.hasWork()) return null;
    const shape = this.shape;
    shape.reset();
    const preempted = this.scheduler.schedule(shape);
    const scheduled = this.scheduler.scheduled;
    if (scheduled.length === 0) {
      this.kv.events.flush();
      return preempted.length === 0 ? null : this.emptyStep(nowMs, preempted);
    }
    this.describe(scheduled, shape);
    const durationMs = this.timing.stepMs(shape);
    const outputs = this.advance(scheduled);
    this.scheduler.compactRunning();
    this.kv.events.flush();
    return {
      startMs: nowMs,
      durationMs,
      prefillTokens: shape.prefillTokens(),
      decodeSeqs: shape.decodeCount,
      outputs,
      preempted,
    };
  }

  hasWork(): boolean {
    return this.live.size > 0;
  }

  stats(): EngineStats {
    const counts = this.kv.pool.counts();
    const c = this.kv.counters;
    const tiers = this.kv.tiers.sizes();
    return {
      running: this.scheduler.running.length,
      waiting: this.scheduler.waitingCount,
      kvUsage: counts.used / this.options.numGpuBlocks,
      blockSize: this.options.blockSize,
      numGpuBlocks: this.options.numGpuBlocks,
      numCpuBlocks: this.options.numCpuBlocks,
      freeBlocks: counts.free,
      cachedBlocks: counts.cached,
      usedBlocks: counts.used,
      cpuBlocksHeld: tiers.cpu,
      storageBlocksHeld: tiers.storage,
      prefixQueries: c.queries,
      prefixHits: c.hits,
      offloadHits: c.offloadHits,
      heldRequests: this.held.size,
      heldBlocks: this.heldBlockCount,
      preemptions: this.scheduler.preemptions,
      evictions: this.kv.pool.evictions,
      promptTokens: this.promptTokens,
      generationTokens: this.generationTokens,
      runningLoras: loras(this.scheduler.running),
      waitingLoras: loras([...this.scheduler.waiting].filter((s) => s.state === "waiting")),
    };
  }

  onKvEvent(listener: (events: KvEvent[]) => void): () => void {
    return this.kv.events.subscribe(listener);
  }

  resetPrefixCache(): boolean {
    if (!this.kv.pool.clearCache()) return false;
    this.kv.tiers.clear();
    if (this.kv.events.active) this.kv.events.cleared();
    this.kv.events.flush();
    return true;
  }

  /** GPU block counts by state; free + cached + used = numGpuBlocks. */
  blockCounts(): BlockCounts {
    return this.kv.pool.counts();
  }

  private describe(scheduled: readonly Sequence[], shape: StepShape): void {
    for (const s of scheduled) {
      if (s.decoding) shape.addDecode(s.computed + 1);
      else
        shape.addPrefill(
          s.stepTokens,
          s.computed,
          s.computed === s.prefillStart,
          s.computed + s.stepTokens === s.total,
        );
    }
    shape.running = this.scheduler.running.length;
  }

  /** Applies the step: advances KV, samples tokens, finishes sequences. */
  private advance(scheduled: readonly Sequence[]): StepOutput[] {
    const outputs: StepOutput[] = new Array(scheduled.length);
    for (let i = 0; i < scheduled.length; i++) {
      const s = scheduled[i]!;
      s.scheduled = false;
      s.computed += s.stepTokens;
      this.kv.commit(s);
      outputs[i] = s.computed === s.total ? this.sample(s) : this.progress(s);
    }
    return outputs;
  }

  private sample(s: Sequence): StepOutput {
    const first = !s.firstEmitted;
    if (first) this.promptTokens += s.promptLen;
    s.firstEmitted = true;
    s.decoding = true;
    s.generated++;
    s.total++;
    this.generationTokens++;
    const finished = s.generated >= s.maxTokens;
    if (finished) this.finish(s);
    return { id: s.id, newTokens: 1, generated: s.generated, first, finished, cachedTokens: s.cachedTokens };
  }

  private progress(s: Sequence): StepOutput {
    return {
      id: s.id,
      newTokens: 0,
      generated: s.generated,
      first: false,
      finished: false,
      cachedTokens: s.cachedTokens,
    };
  }

  private finish(s: Sequence): void {
    s.state = "done";
    this.live.delete(s.id);
    if (!s.holdKvOnFinish) {
      this.kv.free(s);
      return;
    }
    this.held.set(s.id, s);
    this.heldBlockCount += s.blocks.length;
  }

  private emptyStep(nowMs: number, preempted: string[]): StepResult {
    return { startMs: nowMs, durationMs: 0, prefillTokens: 0, decodeSeqs: 0, outputs: [], preempted };
  }
}

function loras(seqs: Iterable<Sequence>): string[] {
  const names = new Set<string>();
  for (const s of seqs) if (s.lora !== null) names.add(s.lora);
  return [...names];
}
