/**
 * Wires a scenario into a fleet run: the real engines (`createEngine`), the real request lifecycle
 * (`loadConfig` of the router config, with the virtual clock and a seeded random source; the
 * scenario's objectives and tenant map), the workload, and the summary over the measurement window.
 */
import { loadConfig } from "../config/index.ts";
import { ManualClock } from "../core/clock.ts";
import {
  createEngine,
  type EngineOptions,
  type ProfileName,
  parseProfileName,
  resolveProfile,
} from "../engine/index.ts";
import { type RunSummary, summarize } from "../measure/summary.ts";
import { routerConfigText, type Scenario } from "../workload/scenario.ts";
import { createWorkload } from "../workload/index.ts";
import { Rng } from "../workload/rng.ts";
import { SyntheticPromptBuilder } from "../workload/synthetic-prompt.ts";
import { LlmdError } from "../api/errors.ts";
import type { PluginRegistry } from "../plugin/registry.ts";
import { Registry } from "prom-client";
import { TenantMap } from "../flow-control/identity.ts";
import { RequestLifecycle } from "../lifecycle/lifecycle.ts";
import { clientIdentity } from "../workload/scenario.ts";
import { isKvEventConsumer } from "../scheduler/framework/hosted.ts";
import { defaultTokenizer } from "../tokenizer/tokenizer.ts";
import { disaggregationOptions } from "./scenario-pd.ts";
import { type FleetResult, runFleet } from "./simulator.ts";

/**
 * The tokenizer of fleet runs: the fast stand-in (4 characters per token). The workloads build
 * their prompts of 4-character units and the engines count the same tokens, so exact model ids
 * would change no routing or timing result, only cost time. Reports name it.
 */
export const FLEET_TOKENIZER = defaultTokenizer;

/** A finished scenario run. */
export interface ScenarioRun {
  scenario: Scenario;
  result: FleetResult;
  summary: RunSummary;
  /** GPUs in the fleet (replicas × the profile's tensor-parallel degree). */
  gpus: number;
  /** KV capacity of the fleet in tokens. */
  fleetKvTokens: number;
  /** The router's flow-control metrics (`llm_d_epp_flow_control_*`), as the gateway exports them. */
  metrics: Registry;
}

/** The engine options every replica of the scenario's fleet runs (each seeded apart by its index). */
export function scenarioEngineOptions(scenario: Scenario): EngineOptions & { profile: ProfileName } {
  const profile = parseProfileName(scenario.fleet.profile);
  if (!profile) throw new LlmdError("invalid_scenario", `unknown profile ${scenario.fleet.profile}`);
  return { ...scenario.fleet.engine, profile, seed: scenario.seed };
}

/**
 * Runs a scenario; `onProgress` gets simulated ms; `registry` resolves the router config's plugin
 * types (default: the built-ins), so plugins of one's own run in the simulator too.
 */
export async function runScenario(
  scenario: Scenario,
  onProgress?: (simulatedMs: number) => void,
  registry?: PluginRegistry,
): Promise<ScenarioRun> {
  const engineOptions = scenarioEngineOptions(scenario);
  const clock = new ManualClock();
  const configText = routerConfigText(scenario);
  /** Router replica `r`: its own scheduler state, plugin instances and seeded random source. */
  const loadRouter = (r: number) => {
    const random = new Rng(r === 0 ? `router:${scenario.seed}` : `router:${scenario.seed}:${r}`);
    return loadConfig(configText, {
      clock,
      tokenizer: FLEET_TOKENIZER,
      random: () => random.next(),
      allowExperimentalPlugins: true,
      ...(registry ? { registry } : {}),
    });
  };
  const probeEngine = createEngine(engineOptions);
  const probe = probeEngine.stats();
  const durationMs = scenario.durationS * 1000;
  const metrics = new Registry();
  const routers = Array.from({ length: scenario.routers }, (_, r) => loadRouter(r));
  const kvEventConsumers = routers.flatMap((router) =>
    [...router.plugins.values()].filter(isKvEventConsumer),
  );
  const result = await runFleet({
    replicas: scenario.fleet.replicas,
    createEngine: (i) => createEngine({ ...engineOptions, seed: scenario.seed + i }),
    routers: scenario.routers,
    createLifecycle: (endpoints, r) => {
      const router = routers[r]!;
      return new RequestLifecycle({
        scheduler: router.scheduler,
        objectives: new Map(Object.entries(scenario.objectives)),
        ...(scenario.tenants ? { tenants: new TenantMap(scenario.tenants) } : {}),
        flowControlGate: router.featureGates.flowControl === true,
        flowControl: router.flowControl,
        plugins: router.plugins,
        clock,
        endpoints,
        // One registry holds one router's `llm_d_epp_flow_control_*` series: the first replica's.
        ...(r === 0 ? { registry: metrics } : {}),
      });
    },
    clients: clientIdentity(scenario),
    chains: scenario.responsesChains,
    clock,
    workload: createWorkload(scenario.workload, { seed: scenario.seed, durationMs }),
    prompts: new SyntheticPromptBuilder(),
    model: scenario.model,
    durationMs,
    drainMs: scenario.drainS * 1000,
    scrapeIntervalMs: scenario.scrapeIntervalMs,
    ...disaggregationOptions(scenario, probeEngine.options),
    kvEvents: { consumers: kvEventConsumers, delayMs: scenario.kvEventDelayMs },
    blockTokens: probe.blockSize,
    loadBucketMs: Math.max(1000, durationMs / 120),
    ...(onProgress ? { onProgress, progressEveryMs: Math.max(1000, durationMs / 200) } : {}),
  });
  const gpus = scenario.fleet.replicas * resolveProfile(engineOptions.profile).model.tp;
  const fromMs = scenario.warmupS * 1000;
  const summary = summarize(result.records, {
    fromMs,
    toMs: durationMs,
    slo: scenario.slo,
    gpuHourPrice: scenario.price.gpuHour,
    gpus,
    prefillByEndpoint: result.timeline.totals(fromMs, durationMs),
    preemptions: result.preemptions,
  });
  const fleetKvTokens = probe.numGpuBlocks * probe.blockSize * scenario.fleet.replicas;
  return { scenario, result, summary, gpus, fleetKvTokens, metrics };
}
