/** Builds a workload from a scenario's `workload` section. */
import { LlmdError } from "../api/errors.ts";
import type { WorkloadSpec } from "./scenario.ts";
import { AgentSession } from "./agent-session.ts";
import { AGENTIC_DEFAULTS, agenticSession } from "./agentic.ts";
import { AzureWorkload } from "./azure.ts";
import { CHAT_DEFAULTS, chatSession } from "./chat.ts";
import { ClosedLoopWorkload, type SessionFactory } from "./closed-loop.ts";
import { MooncakeWorkload } from "./mooncake.ts";
import { Rng } from "./rng.ts";
import { SharedPrefixWorkload } from "./shared-prefix.ts";
import { TENANT_DEFAULTS, TenantMixWorkload } from "./tenants.ts";
import type { Workload } from "./types.ts";
import { loadWekaSessions, sessionsInFolds, type WekaSession, wekaPlan } from "./weka.ts";

/** Run parameters a workload needs besides its own section. */
export interface WorkloadRun {
  seed: number;
  /** Arrivals stop here, ms. */
  durationMs: number;
}

const wekaCache = new Map<string, WekaSession[]>();

/** The workload described by `spec`. */
export function createWorkload(spec: WorkloadSpec, run: WorkloadRun): Workload {
  switch (spec.type) {
    case "mooncake":
      return MooncakeWorkload.load({ ...spec, seed: run.seed });
    case "azure":
      return AzureWorkload.load({ ...spec, seed: run.seed });
    case "shared-prefix":
      return new SharedPrefixWorkload({ ...spec, durationMs: run.durationMs, seed: run.seed });
    case "weka":
      return closedLoop(spec, run, wekaFactory(spec, run.seed));
    case "agentic": {
      const options = {
        ...AGENTIC_DEFAULTS,
        ...definedOnly(spec),
        thinkCapMs: spec.thinkCapS * 1000,
        seed: run.seed,
      };
      return closedLoop(spec, run, (i) => agenticSession(options, i));
    }
    case "tenants": {
      const { type: _, ...rates } = spec;
      return new TenantMixWorkload({ ...TENANT_DEFAULTS, ...definedOnly(rates), ...run, load: spec.load });
    }
    case "chat": {
      const options = { ...CHAT_DEFAULTS, thinkMeanMs: spec.thinkMeanS * 1000, seed: run.seed };
      return closedLoop(spec, run, (i) => chatSession(options, i));
    }
  }
}

function closedLoop(
  spec: { type: string; sessions: number; rampS: number },
  run: WorkloadRun,
  factory: SessionFactory,
): Workload {
  return new ClosedLoopWorkload({
    name: spec.type,
    concurrency: spec.sessions,
    rampMs: spec.rampS * 1000,
    stopAtMs: run.durationMs,
    factory,
  });
}

function wekaFactory(spec: Extract<WorkloadSpec, { type: "weka" }>, seed: number): SessionFactory {
  let sessions = wekaCache.get(spec.dir);
  if (!sessions) {
    sessions = loadWekaSessions(spec.dir);
    wekaCache.set(spec.dir, sessions);
  }
  const pool = spec.fold ? sessionsInFolds(sessions, spec.fold) : sessions;
  if (pool.length === 0)
    throw new LlmdError("invalid_scenario", `workload.fold selects no session of ${spec.dir}`);
  const rng = new Rng(`weka-draws:${seed}`);
  const options = { warmFraction: spec.warmFraction, thinkCapMs: spec.thinkCapS * 1000 };
  return (index) => new AgentSession(wekaPlan(rng.pick(pool), index, options));
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
