/**
 * Everything one simulator server owns: its engine and driver, metrics, output planner, failure
 * injector and the names it serves. Built once from a validated `SimConfig`.
 */
import type { ModelCard } from "../api/openai.ts";
import { BodyBudget } from "../api/request-body.ts";
import { createEngine } from "../engine/index.ts";
import type { ResolvedEngineOptions } from "../engine/options.ts";
import type { ChatTokenizer } from "../tokenizer/chat.ts";
import { type SimConfig, servedModelNames } from "./config.ts";
import { EngineDriver } from "./driver.ts";
import { toEngineOptions } from "./engine-options.ts";
import { FailureInjector } from "./failure.ts";
import { KvTransferAgent } from "./kv-transfer.ts";
import { SimMetrics } from "./metrics.ts";
import { seededRandom } from "../core/random.ts";
import { OutputPlanner } from "./output.ts";
import { SimDrain } from "./drain.ts";
import { simTokenizer } from "./tokenizer.ts";

/** A served name: the base model (no adapter) or a LoRA adapter. */
export interface ServedModel {
  lora: string | undefined;
}

/** Per-server state shared by the handlers. */
export interface SimContext {
  readonly config: SimConfig;
  readonly driver: EngineDriver;
  /** The engine's resolved options (profile, KV pool size). */
  readonly engineOptions: ResolvedEngineOptions;
  readonly metrics: SimMetrics;
  readonly planner: OutputPlanner;
  readonly failures: FailureInjector;
  /** What `usage` counts with (`--tokenizer`, else the profile's). */
  readonly tokenizer: ChatTokenizer;
  /** The graceful shutdown: open requests and running generations. */
  readonly drain: SimDrain;
  /** The bytes of request bodies held at once (`--max-inflight-body-bytes`). */
  readonly bodies: BodyBudget;
  /** P/D KV transfer (`--kv-transfer-config`); null when not configured. */
  readonly kvTransfer: KvTransferAgent | null;
  /** Longest prompt + output, tokens. */
  readonly maxModelLen: number;
  /** Name → what it serves; unknown names are absent. */
  readonly models: ReadonlyMap<string, ServedModel>;
  /** `/v1/models` entries. */
  readonly modelCards: readonly ModelCard[];
  /** Fresh request id (unique per server). */
  nextId(): string;
}

/** Builds the context; throws `LlmdError("invalid_engine_options")` for impossible engine sizes. */
export function createSimContext(config: SimConfig): SimContext {
  const seed = config.seed ?? Date.now() % 0x100000000;
  const engine = createEngine(toEngineOptions(config, seed));
  const resolved = engine.options;
  const base = servedModelNames(config);
  const info = { modelName: base[0]!, maxLoras: config["max-loras"] };
  const metrics: SimMetrics = new SimMetrics(info, engine.stats.bind(engine), () => driver.hostTiming());
  const driver = new EngineDriver(engine, config.speed, {
    onStepDelivered: (lateMs) => metrics.stepDelivered(lateMs),
  });
  const models = new Map<string, ServedModel>();
  for (const name of base) models.set(name, { lora: undefined });
  for (const lora of config["lora-modules"]) models.set(lora, { lora });
  let counter = 0;
  const random = seededRandom(seed ^ 0x5bd1e995);
  const tokenizer = simTokenizer(config);
  const transfer = config["kv-transfer-config"];
  const kvTransfer = transfer
    ? new KvTransferAgent(transfer, config, engine, random, metrics.registry)
    : null;
  return {
    config,
    driver,
    engineOptions: resolved,
    metrics,
    planner: new OutputPlanner(config.mode, seed, resolved.maxModelLen, tokenizer),
    failures: new FailureInjector(config["failure-injection-rate"], config["failure-types"], random),
    tokenizer,
    drain: new SimDrain(),
    bodies: new BodyBudget(config["max-inflight-body-bytes"]),
    kvTransfer,
    maxModelLen: resolved.maxModelLen,
    models,
    modelCards: modelCards(base, config["lora-modules"], resolved.maxModelLen),
    nextId: () => `${seed.toString(36)}-${(counter++).toString(36)}`,
  };
}

function modelCards(base: string[], loras: string[], maxModelLen: number): ModelCard[] {
  const created = Math.floor(Date.now() / 1000);
  const card = (id: string, parent: string | null): ModelCard => ({
    id,
    object: "model",
    created,
    owned_by: "vllm",
    root: parent ?? id,
    parent,
    max_model_len: maxModelLen,
  });
  return [...base.map((name) => card(name, null)), ...loras.map((name) => card(name, base[0]!))];
}
