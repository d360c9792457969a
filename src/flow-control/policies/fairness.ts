/**
 * Simple fairness policies (tier 2): `global-strict-fairness-policy` (no fairness: the band is one
 * logical queue in ordering-policy order) and `round-robin-fairness-policy` (one dispatch per flow
 * in turn, cursor over flows sorted by fairness id).
 */
import type { BandView, FairnessPolicy, FlowItem, FlowView } from "../types.ts";

/** `global-strict-fairness-policy`: the flow whose head goes first by the band's ordering policy. */
export function globalStrictFairness(name = "global-strict-fairness-policy"): FairnessPolicy {
  return {
    type: "global-strict-fairness-policy",
    name,
    kind: "fairness",
    pickFlow(band: BandView): FlowView | undefined {
      let best: FlowView | undefined;
      for (const flow of band.activeFlows) if (!best || band.headBefore(flow, best)) best = flow;
      return best;
    },
  };
}

interface RoundRobinState {
  /** Fairness id of the flow that dispatched last. */
  last: string | undefined;
}

/** `round-robin-fairness-policy`: the first flow after the last served one, wrapping around. */
export function roundRobinFairness(name = "round-robin-fairness-policy"): FairnessPolicy {
  return {
    type: "round-robin-fairness-policy",
    name,
    kind: "fairness",
    pickFlow(band: BandView): FlowView | undefined {
      const last = (band.fairnessState as RoundRobinState | undefined)?.last;
      const flows = band.activeFlows;
      if (last === undefined) return flows[0];
      return flows.find((flow) => flow.fairnessId > last) ?? flows[0];
    },
    onDispatched(band: BandView, item: FlowItem): void {
      const state = (band.fairnessState ??= { last: undefined }) as RoundRobinState;
      state.last = item.fairnessId;
    },
  };
}
