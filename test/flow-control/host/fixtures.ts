/**
 * Fixtures for the flow-control host tests: a controller whose saturation comes from a
 * concurrency detector (so in-flight load is exact), or from a hand-set value, and a fake pool.
 */
import type { Endpoint } from "../../../src/endpoints/endpoint.ts";
import type { FlowControlConfigInput } from "../../../src/flow-control/config.ts";
import {
  type ConcurrencyDetector,
  concurrencyDetector,
} from "../../../src/flow-control/policies/concurrency-detector.ts";
import { endpoint, testController } from "../../../src/flow-control/test-helpers.ts";
import type { FlowControlRuntime } from "../../../src/flow-control/build.ts";
import type { SaturationDetector } from "../../../src/flow-control/types.ts";
import type { GatePool } from "../../../src/flow-control/host/gate.ts";

/** A runtime whose pool saturation = in-flight requests / `capacity` (one endpoint). */
export function concurrencyRuntime(
  capacity: number,
  config: FlowControlConfigInput = {},
): FlowControlRuntime & { tracker: ConcurrencyDetector } {
  const tracker = concurrencyDetector(
    { concurrencyMode: "requests", maxConcurrency: capacity, maxTokenConcurrency: 1e6, headroom: 0 },
    "cd",
  );
  const runtime = testController({ ...config, saturationDetector: { pluginRef: "cd" } }, [tracker]);
  return { ...runtime, tracker };
}

/** A detector reporting whatever `level.value` holds. */
export function manualDetector(level: { value: number }): SaturationDetector {
  return {
    type: "manual-detector",
    name: "manual",
    kind: "saturation-detector",
    saturation: () => level.value,
    endpointSaturated: () => level.value >= 1,
  };
}

/** A runtime whose saturation is set by hand through the returned `level`. */
export function manualRuntime(config: FlowControlConfigInput = {}) {
  const level = { value: 0 };
  const runtime = testController({ ...config, saturationDetector: { pluginRef: "manual" } }, [
    manualDetector(level),
  ]);
  return { ...runtime, level };
}

/** A pool with a mutable endpoint list and a `change()` that fires the listeners. */
export class FakePool implements GatePool {
  endpoints: Endpoint[] = [endpoint("ep-a")];
  private readonly listeners: (() => void)[] = [];

  candidates(): readonly Endpoint[] {
    return this.endpoints;
  }

  on(_event: "change", fn: () => void): void {
    this.listeners.push(fn);
  }

  change(): void {
    for (const fn of this.listeners) fn();
  }
}
