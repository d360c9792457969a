/** `lora-affinity-scorer`: prefer endpoints where the requested adapter is (or can be) loaded. */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { noParameters } from "../../../plugin/params.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

/** llm-d's scores: adapter active, a free adapter slot, adapter waiting to load, none of these. */
export const LORA_SCORES = { active: 1, capacity: 0.8, waiting: 0.6, full: 0 } as const;

function loraScore(endpoint: Endpoint, model: string): number {
  const m = endpoint.metrics;
  if (m.activeModels.includes(model)) return LORA_SCORES.active;
  if (m.activeModels.length + m.waitingModels.length < m.maxActiveModels) return LORA_SCORES.capacity;
  if (m.waitingModels.includes(model)) return LORA_SCORES.waiting;
  return LORA_SCORES.full;
}

class LoraAffinityScorer implements Scorer {
  readonly type = "lora-affinity-scorer";
  readonly category = "affinity";
  constructor(readonly name: string) {}

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const out = new Float64Array(endpoints.length);
    for (let i = 0; i < out.length; i++) out[i] = loraScore(endpoints[i]!, ctx.request.model);
    return out;
  }
}

/** 1.0 adapter active; 0.8 slot free; 0.6 adapter waiting; 0 otherwise (from `vllm:lora_requests_info`). */
export const definition: PluginDefinition<Record<string, never>> = {
  type: "lora-affinity-scorer",
  stability: "beta",
  description: "Scores LoRA adapter residency: active 1, free slot 0.8, waiting 0.6, full 0",
  parameters: noParameters,
  create: (_params, env) => new LoraAffinityScorer(env.name),
};
