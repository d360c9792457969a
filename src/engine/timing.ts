/**
 * Timing models: price one {@link StepShape} in milliseconds.
 * - `ProfileTimingModel`: the measured H200 composition (profile README), plus tensor-parallel all-reduce,
 *   offload reloads and a fixed per-step overhead.
 * - `SimpleTimingModel`: llm-d-inference-sim's constant / per-token latencies.
 */
import { Curve, Surface } from "./interp.ts";
import type { ModelShape } from "./profile.ts";
import type { ResolvedEngineOptions, SimpleTiming } from "./options.ts";
import type { StepShape } from "./step-shape.ts";
import { seededRandom } from "../core/random.ts";

/** Prices a step. Implementations keep no per-step state except an optional seeded PRNG. */
export interface TimingModel {
  /** Duration in ms (≥ 0) of the step described by `shape`. */
  stepMs(shape: StepShape): number;
}

/** Per-layer curves of one model shape, in ms. */
export class LayerCosts {
  readonly linear: Curve;
  readonly causal: Curve;
  /** outer = new tokens n, inner = cached tokens p. */
  readonly prefix: Surface;
  /** outer = batch B, inner = context L. */
  readonly decode: Surface;

  constructor(model: ModelShape) {
    this.linear = new Curve(
      Object.entries(model.linear_ms_per_layer).map(([t, ms]) => [Number(t), ms] as const),
    );
    const causal: [number, number][] = [];
    const prefix: [number, number, number][] = [];
    for (const [key, ms] of Object.entries(model.attn_prefill_ms_per_layer)) {
      const [kind, n, p] = key.split(":");
      if (kind === "causal") causal.push([Number(n), ms]);
      else prefix.push([Number(n), Number(p), ms]);
    }
    this.causal = new Curve(causal);
    this.prefix = new Surface(prefix);
    this.decode = new Surface(
      Object.entries(model.attn_decode_ms_per_layer).map(([key, ms]) => {
        const [b, l] = key.split(":");
        return [Number(b), Number(l), ms] as const;
      }),
    );
  }
}

/** The profile composition; see docs/engine.md for the formula and assumptions. */
export class ProfileTimingModel implements TimingModel {
  readonly costs: LayerCosts;
  private readonly layers: number;
  /** ms per batched token of all-reduce traffic, summed over all layers. */
  private readonly allReduceMsPerToken: number;
  private readonly allReduceFixedMs: number;

  constructor(private readonly o: ResolvedEngineOptions) {
    const m = o.profile.model;
    this.costs = new LayerCosts(m);
    this.layers = m.layers;
    // Megatron-style TP: two all-reduces per layer of T×hidden bf16 activations; a ring moves 2(tp−1)/tp of them.
    const allReduces = m.tp > 1 ? 2 * m.layers : 0;
    const bytesPerToken = m.hidden * 2 * ((2 * (m.tp - 1)) / m.tp);
    this.allReduceMsPerToken = (allReduces * bytesPerToken) / (o.allReduceGBps * 1e6);
    this.allReduceFixedMs = (allReduces * o.allReduceLatencyUs) / 1000;
  }

  stepMs(s: StepShape): number {
    const c = this.costs;
    const tokens = s.batchTokens();
    if (tokens === 0) return this.reloadMs(s);
    let perLayer = c.linear.at(tokens);
    for (let i = 0; i < s.prefillCount; i++) {
      const n = s.prefillNew[i]!;
      perLayer += c.causal.at(n) + c.prefix.at(n, s.prefillPast[i]!);
    }
    if (s.decodeCount > 0) perLayer += c.decode.at(s.decodeCount, s.decodeContextSum / s.decodeCount);
    const allReduce = this.allReduceFixedMs + this.allReduceMsPerToken * tokens;
    return this.layers * perLayer + allReduce + this.o.stepOverheadMs + this.reloadMs(s);
  }

  /** Reloads are serial with the step (not overlapped): bytes / bandwidth per tier. */
  private reloadMs(s: StepShape): number {
    return (
      s.cpuReloadBytes / (this.o.cpuOffloadGBps * 1e6) +
      s.storageReloadBytes / (this.o.storageOffloadGBps * 1e6)
    );
  }
}

/** llm-d-inference-sim's models; the step takes as long as its slowest request's share. */
export class SimpleTimingModel implements TimingModel {
  private readonly perToken: boolean;
  private readonly random: () => number;

  constructor(
    private readonly t: SimpleTiming,
    private readonly o: ResolvedEngineOptions,
  ) {
    this.perToken =
      (t.latencyCalculator ?? (t.prefillTimePerTokenMs !== undefined ? "per-token" : "constant")) ===
      "per-token";
    this.random = seededRandom(o.seed);
  }

  stepMs(s: StepShape): number {
    const t = this.t;
    let ms = s.decodeCount > 0 ? this.jitter(t.interTokenLatencyMs ?? 0, t.interTokenLatencyStdDevMs) : 0;
    for (let i = 0; i < s.prefillCount; i++) ms = Math.max(ms, this.prefillChunkMs(s, i));
    const reload =
      s.cpuReloadBytes / (this.o.cpuOffloadGBps * 1e6) +
      s.storageReloadBytes / (this.o.storageOffloadGBps * 1e6);
    return ms * this.loadFactor(s.running) + reload;
  }

  private prefillChunkMs(s: StepShape, i: number): number {
    const t = this.t;
    if (!this.perToken)
      return s.prefillLast[i] ? this.jitter(t.timeToFirstTokenMs ?? 0, t.timeToFirstTokenStdDevMs) : 0;
    const base =
      s.prefillNew[i]! * (t.prefillTimePerTokenMs ?? 0) +
      (s.prefillFirst[i] ? (t.prefillOverheadMs ?? 0) : 0);
    return this.jitter(base, t.prefillTimeStdDevMs);
  }

  /** 1 with one request running, rising linearly to `timeFactorUnderLoad` at maxNumSeqs. */
  private loadFactor(running: number): number {
    const f = this.t.timeFactorUnderLoad ?? 1;
    if (f === 1 || this.o.maxNumSeqs <= 1) return 1;
    const share = Math.min(1, Math.max(0, (running - 1) / (this.o.maxNumSeqs - 1)));
    return 1 + (f - 1) * share;
  }

  /** Normal sample around `mean` (std-dev capped at 30% of mean), clamped to ±70%. */
  private jitter(mean: number, stdDev: number | undefined): number {
    if (!stdDev || mean <= 0) return mean;
    const sd = Math.min(stdDev, 0.3 * mean);
    const u1 = Math.max(this.random(), 1e-12);
    const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * this.random());
    return Math.min(1.7 * mean, Math.max(0.3 * mean, mean + z * sd));
  }
}

/** The timing model the options ask for. */
export function createTimingModel(o: ResolvedEngineOptions): TimingModel {
  return o.timing.kind === "simple" ? new SimpleTimingModel(o.timing, o) : new ProfileTimingModel(o);
}
