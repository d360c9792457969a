/**
 * `program-aware-fairness`: Least-Attained-Service across programs (a program = a fairness id).
 * Service = input tokens + 2 × output tokens, decayed exponentially with a half-life so old usage
 * is forgiven. The next flow minimises `wService·service/maxService − wHeadWait·wait/maxWait` over
 * the band's active flows: the least-served program goes first, and a long-waiting head can win.
 */
import type { ResponseUsage } from "../../scheduler/framework/types.ts";
import type { BandView, FairnessPolicy, FlowItem, FlowView } from "../types.ts";

/** Parameters (llm-d names and defaults). */
export interface ProgramAwareFairnessParams {
  strategy: "las";
  lasWeightService: number;
  lasWeightHeadWait: number;
  /** 0 = no decay. */
  lasHalfLifeSeconds: number;
  /** Programs idle this long are forgotten. */
  evictionTtlSeconds: number;
  /** How often idle programs are swept. */
  evictionSweepSeconds: number;
}

interface ProgramService {
  /** Attained service at `updatedAt` (token units). */
  service: number;
  updatedAt: number;
}

/** Per-program attained service with exponential decay; exposed for metrics and tests. */
export interface ProgramAwareFairness extends FairnessPolicy {
  /** Decayed service of `program` at `now` (0 when unknown). */
  serviceOf(program: string, now: number): number;
  /** Number of programs tracked. */
  readonly programCount: number;
}

/** Builds a `program-aware-fairness` instance. */
export function programAwareFairness(
  params: ProgramAwareFairnessParams,
  name = "program-aware-fairness",
): ProgramAwareFairness {
  const programs = new Map<string, ProgramService>();
  const halfLifeMs = params.lasHalfLifeSeconds * 1000;
  let lastSweep = Number.NEGATIVE_INFINITY;

  const decayed = (record: ProgramService, now: number): number =>
    halfLifeMs > 0 ? record.service * 2 ** (-(now - record.updatedAt) / halfLifeMs) : record.service;

  const serviceOf = (program: string, now: number): number => {
    const record = programs.get(program);
    return record ? decayed(record, now) : 0;
  };

  const charge = (program: string, amount: number, now: number): void => {
    const record = programs.get(program);
    if (record) {
      record.service = Math.max(0, decayed(record, now) + amount);
      record.updatedAt = now;
    } else programs.set(program, { service: Math.max(0, amount), updatedAt: now });
    sweep(now);
  };

  const sweep = (now: number): void => {
    if (now - lastSweep < params.evictionSweepSeconds * 1000) return;
    lastSweep = now;
    const ttlMs = params.evictionTtlSeconds * 1000;
    for (const [program, record] of programs) if (now - record.updatedAt > ttlMs) programs.delete(program);
  };

  const pickFlow = (band: BandView, now: number): FlowView | undefined => {
    let maxService = 0;
    let maxWait = 0;
    for (const flow of band.activeFlows) {
      maxService = Math.max(maxService, serviceOf(flow.fairnessId, now));
      maxWait = Math.max(maxWait, now - (flow.head()?.enqueuedAt ?? now));
    }
    let best: FlowView | undefined;
    let bestScore = Number.POSITIVE_INFINITY;
    for (const flow of band.activeFlows) {
      const service = maxService > 0 ? serviceOf(flow.fairnessId, now) / maxService : 0;
      const wait = maxWait > 0 ? (now - (flow.head()?.enqueuedAt ?? now)) / maxWait : 0;
      const score = params.lasWeightService * service - params.lasWeightHeadWait * wait;
      if (score < bestScore) {
        best = flow;
        bestScore = score;
      }
    }
    return best;
  };

  return {
    type: "program-aware-fairness",
    name,
    kind: "fairness",
    pickFlow,
    serviceOf,
    get programCount() {
      return programs.size;
    },
    onDispatched(_band: BandView, item: FlowItem, now: number): void {
      charge(item.fairnessId, item.inputTokens, now);
    },
    onCompleted(item: FlowItem, usage: ResponseUsage | undefined, now: number): void {
      if (!usage) return;
      // Input was charged at dispatch from the estimate; settle it against the measured count.
      charge(item.fairnessId, usage.promptTokens - item.inputTokens + 2 * usage.completionTokens, now);
    },
  };
}
