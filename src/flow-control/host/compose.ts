/**
 * One call for a live host: builds the controller from a loaded config's `flowControl` section and
 * plugin instances, its `llm_d_epp_flow_control_*` metrics in the host's registry, and the
 * {@link FlowGate} in front of it.
 */
import type { Registry } from "prom-client";
import { type Clock, wallClock } from "../../core/clock.ts";
import type { Plugin } from "../../plugin/types.ts";
import { defaultTokenizer, type Tokenizer } from "../../tokenizer/tokenizer.ts";
import { createFlowController, type FlowControlRuntime } from "../build.ts";
import type { FlowControlConfig } from "../config.ts";
import { FlowControlMetrics } from "../metrics.ts";
import { FlowGate, type FlowGateOptions, type GatePool } from "./gate.ts";

/** Inputs of {@link createGatewayFlowControl}. */
export interface GatewayFlowControlOptions extends Pick<FlowGateOptions, "pollIntervalMs" | "maxUnplaced"> {
  /** `RuntimeConfig.flowControl` (present when the `flowControl` gate is on). */
  config: FlowControlConfig;
  /** `RuntimeConfig.plugins`: configured instances, so refs resolve to the scheduler's own objects. */
  plugins: ReadonlyMap<string, Plugin>;
  pool: GatePool;
  /** The host's metrics registry. */
  registry: Registry;
  /** `inference_pool` label (default `default`). */
  poolName?: string;
  clock?: Clock;
  tokenizer?: Tokenizer;
}

/** The composed flow-control layer of a live host. */
export interface GatewayFlowControl {
  gate: FlowGate;
  metrics: FlowControlMetrics;
  runtime: FlowControlRuntime;
}

/** Builds runtime, metrics and gate. Throws (a startup error) on an unresolvable plugin ref. */
export function createGatewayFlowControl(options: GatewayFlowControlOptions): GatewayFlowControl {
  const metrics = new FlowControlMetrics({ registry: options.registry, poolName: options.poolName });
  const clock = options.clock ?? wallClock;
  const runtime = createFlowController(
    options.config,
    {
      clock,
      tokenizer: options.tokenizer ?? defaultTokenizer,
      lookup: (name) => options.plugins.get(name),
    },
    metrics,
  );
  metrics.bind({
    stats: () => runtime.controller.stats(),
    saturation: () => runtime.detector.saturation(options.pool.candidates(), clock.now()),
    staleEndpoints: () => runtime.detector.staleEndpoints?.(options.pool.candidates(), clock.now()) ?? 0,
  });
  const gate = new FlowGate({
    runtime,
    pool: options.pool,
    clock,
    pollIntervalMs: options.pollIntervalMs,
    maxUnplaced: options.maxUnplaced,
    onDispatchCycle: (seconds) => metrics.dispatchCycle(seconds),
  });
  return { gate, metrics, runtime };
}
