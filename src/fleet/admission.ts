/**
 * The admission stage of the simulated router, in front of scheduling. With the `flowControl`
 * feature gate it is llm-d's flow control driven in virtual time ({@link VirtualFlowHost}); without
 * it, llm-d's legacy admission: a sheddable request (priority < 0) is rejected with 429
 * `rejected-saturated` when the configured saturation detector reads the pool at ≥ 1, everything
 * else goes straight to scheduling. Both answer in the same {@link VirtualFlowStep} shape.
 */
import type { Clock } from "../core/clock.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { ResponseUsage } from "../scheduler/framework/types.ts";
import type { Plugin } from "../plugin/types.ts";
import { createFlowController, createSaturationDetector } from "../flow-control/build.ts";
import { type FlowControlConfig, flowControlConfigSchema } from "../flow-control/config.ts";
import { VirtualFlowHost, type VirtualFlowStep } from "../flow-control/host/virtual.ts";
import type { FlowItem, SaturationDetector } from "../flow-control/types.ts";
import { defaultTokenizer } from "../tokenizer/tokenizer.ts";

/** What the fleet asks of admission; every method answers what to dispatch, drop and evict now. */
export interface FleetAdmission {
  /** Requests waiting in admission (0 for legacy). */
  readonly queued: number;
  enqueue(item: FlowItem, at: number): VirtualFlowStep;
  placed(id: string, at: number, endpointKey: string): VirtualFlowStep;
  completed(id: string, usage: ResponseUsage | undefined, at: number): VirtualFlowStep;
  saturationChanged(at: number): VirtualFlowStep;
  wake(at: number): VirtualFlowStep;
  /** End of run: whatever still waits is dropped (`rejected-shutting-down`). */
  shutdown(at: number): VirtualFlowStep;
}

/** Inputs of {@link createFleetAdmission}. */
export interface FleetAdmissionOptions {
  /** `featureGates: [flowControl]` of the router config. */
  flowControlGate: boolean;
  /** The router config's `flowControl` section (defaults when absent). */
  config: FlowControlConfig | undefined;
  /** The router's configured plugin instances (refs resolve to them). */
  plugins: ReadonlyMap<string, Plugin>;
  clock: Clock;
  endpoints(): readonly Endpoint[];
}

/** Flow control when the gate is on, else legacy admission (see the module comment). */
export function createFleetAdmission(options: FleetAdmissionOptions): FleetAdmission {
  const config = options.config ?? flowControlConfigSchema.parse({});
  const env = {
    clock: options.clock,
    tokenizer: defaultTokenizer,
    lookup: (name: string) => options.plugins.get(name),
  };
  if (options.flowControlGate) {
    return new VirtualFlowHost({ runtime: createFlowController(config, env), endpoints: options.endpoints });
  }
  return new LegacyAdmission(createSaturationDetector(config, env), options.endpoints);
}

const NONE = Object.freeze([]);
const IDLE: VirtualFlowStep = Object.freeze({
  dispatched: NONE,
  dropped: NONE,
  evicted: NONE,
  blocked: false,
  wakeAt: undefined,
});

/** llm-d without flow control: shed priority < 0 while saturated, pass everything else. */
class LegacyAdmission implements FleetAdmission {
  readonly queued = 0;
  constructor(
    private readonly detector: SaturationDetector,
    private readonly endpoints: () => readonly Endpoint[],
  ) {}

  enqueue(item: FlowItem, at: number): VirtualFlowStep {
    const shed = item.priority < 0 && this.detector.saturation(this.endpoints(), at) >= 1;
    const exit = { item, outcome: shed ? "rejected-saturated" : "dispatched", queuedMs: 0 } as const;
    return { ...IDLE, ...(shed ? { dropped: [exit] } : { dispatched: [exit] }) };
  }

  placed(): VirtualFlowStep {
    return IDLE;
  }

  completed(): VirtualFlowStep {
    return IDLE;
  }

  saturationChanged(): VirtualFlowStep {
    return IDLE;
  }

  wake(): VirtualFlowStep {
    return IDLE;
  }

  shutdown(): VirtualFlowStep {
    return IDLE;
  }
}
