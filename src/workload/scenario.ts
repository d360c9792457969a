/**
 * Scenario files (YAML, zod-validated, unknown fields rejected): fleet size and engine profile,
 * workload and load level, router config (a path relative to the scenario, or inline), duration,
 * seed, scrape interval, SLO and price. `--set a.b=v` overrides any field before validation.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { LlmdError } from "../api/errors.ts";
import type { ClientIdentity } from "./client-wire.ts";

const positive = z.number().positive();
const closedLoop = {
  /** Concurrent sessions (the load level). */
  sessions: z.int().positive(),
  /** Initial sessions start spread over this many seconds. */
  rampS: z.number().nonnegative().default(30),
  /** Think times and spawn delays are capped here, seconds (workloads.md §4: 60 s, or none). */
  thinkCapS: positive.default(60),
};
const replay = {
  timeScale: positive.default(1),
  /** Trace second the replay starts at: a window of the trace, re-timed from there. */
  startS: z.number().nonnegative().default(0),
  limit: z.int().positive().optional(),
  /** Each arrival is delayed by up to this many ms, drawn from the run's seed (src/workload/replay.ts). */
  jitterMs: z.number().nonnegative().default(0),
};

const workloadSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("weka"),
    dir: z.string().default("weka-claude-code"),
    warmFraction: z.number().min(0).max(1).default(0),
    /** Draw only sessions of these folds of a k-fold split by session-id hash (src/workload/weka.ts). */
    fold: z
      .strictObject({ k: z.int().min(2), include: z.array(z.int().nonnegative()).min(1) })
      .refine((f) => f.include.every((i) => i < f.k), { message: "fold.include entries must be < fold.k" })
      .optional(),
    ...closedLoop,
  }),
  z.strictObject({
    type: z.literal("agentic"),
    ...closedLoop,
    turnsMedian: positive.optional(),
    growthMedian: positive.optional(),
    systemTokens: z.int().positive().optional(),
    subagentProbability: z.number().min(0).max(1).optional(),
  }),
  z.strictObject({ type: z.literal("chat"), ...closedLoop, thinkMeanS: positive.default(5) }),
  z.strictObject({
    type: z.literal("mooncake"),
    path: z.string().default("mooncake-fast25/conversation_trace.jsonl"),
    ...replay,
  }),
  z.strictObject({
    type: z.literal("azure"),
    path: z.string().default("azure-llm-2023/AzureLLMInferenceTrace_conv.csv"),
    kind: z.string().optional(),
    ...replay,
  }),
  z.strictObject({
    type: z.literal("shared-prefix"),
    rps: positive,
    groups: z.int().positive().default(150),
    promptsPerGroup: z.int().positive().default(5),
    systemTokens: z.int().positive().default(6000),
    questionTokens: z.int().positive().default(1200),
    outputTokens: z.int().positive().default(1000),
  }),
  z.strictObject({
    type: z.literal("tenants"),
    /** Offered load as a multiple of fleet capacity (the base rates). */
    load: positive.default(1),
    chatSessionsPerS: z.number().nonnegative().optional(),
    agentBurstsPerS: z.number().nonnegative().optional(),
    burstSize: z.int().positive().optional(),
    batchPerS: positive.optional(),
    batchInputTokens: z.int().min(1001).optional(),
    batchOutputTokens: z.int().positive().optional(),
  }),
]);

/** Engine options passed through to `createEngine` (names as in src/engine/options.ts). */
const engineSchema = z
  .strictObject({
    blockSize: z.int().positive().optional(),
    maxModelLen: z.int().positive().optional(),
    maxNumSeqs: z.int().positive().optional(),
    maxNumBatchedTokens: z.int().positive().optional(),
    /** vLLM's `--long-prefill-token-threshold` (0 = no cap). */
    longPrefillTokenThreshold: z.int().nonnegative().optional(),
    gpuMemoryUtilization: z.number().gt(0).max(1).optional(),
    kvCacheSize: z.int().positive().optional(),
    cpuOffloadGb: z.number().nonnegative().optional(),
    /** vLLM's `--scheduling-policy`; under `priority` the engine gets each request's -priority. */
    schedulingPolicy: z.enum(["fcfs", "priority"]).optional(),
  })
  .default({});

/** The validated scenario. */
export const scenarioSchema = z.strictObject({
  name: z.string().optional(),
  seed: z.int().default(1),
  /** Arrivals stop after this many simulated seconds. */
  durationS: positive,
  /** Requests arriving before this are warm-up: they fill caches but are not measured. */
  warmupS: z.number().nonnegative().default(0),
  /** In-flight requests get this long after `durationS` to finish. */
  drainS: z.number().nonnegative().default(300),
  scrapeIntervalMs: positive.default(50),
  /**
   * Publisher → router latency of the engines' KV events, ms (a config with a precise prefix
   * plugin gets every engine's events this long after the step that emitted them).
   */
  kvEventDelayMs: z.number().nonnegative().default(5),
  model: z.string().default("llama3-8b"),
  fleet: z
    .strictObject({
      replicas: z.int().positive(),
      profile: z.string().default("h200-llama3-8b"),
      engine: engineSchema,
      /**
       * P/D (xPyD): replica groups in order, each labelled `llm-d.ai/role: <role>`; their sizes
       * sum to `replicas`. None: unlabelled replicas.
       */
      groups: z.array(z.strictObject({ role: z.string().min(1), replicas: z.int().positive() })).default([]),
      /** How P/D moves KV (src/engine/kv-transfer.ts): a link preset, overrides, the abort timeout. */
      kvTransfer: z
        .strictObject({
          link: z.string().default("infiniband"),
          gbps: positive.optional(),
          latencyMs: z.number().nonnegative().optional(),
          abortTimeoutS: positive.default(480),
        })
        .prefault({}),
    })
    .refine((f) => f.groups.length === 0 || f.groups.reduce((n, g) => n + g.replicas, 0) === f.replicas, {
      message: "fleet.groups' replicas must sum to fleet.replicas",
      path: ["groups"],
    }),
  /** Faults injected in virtual time: P/D transfer failures (a fraction) and replica deaths. */
  faults: z
    .strictObject({
      transferFailureRate: z.number().min(0).max(1).default(0),
      /** A random replica dies (and restarts at once, empty) every this many seconds. */
      replicaDeathEveryS: positive.optional(),
    })
    .prefault({}),
  router: z.union([z.strictObject({ config: z.string() }), z.strictObject({ configText: z.string() })]),
  workload: workloadSchema,
  /** InferenceObjective name → priority (requests name their objective; unknown or none = 0). */
  objectives: z.record(z.string(), z.int()).default({}),
  /**
   * The router's tenant map (the `--tenants` file's entries): API keys decide fairness id and cap
   * priority. A request whose objective names a tenant is sent with that tenant's first key.
   */
  tenants: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        apiKeys: z.array(z.string().min(8)).min(1),
        fairnessId: z.string().min(1).optional(),
        objective: z.string().min(1).optional(),
        maxPriority: z.int().optional(),
      }),
    )
    .optional(),
  /**
   * The clients chain each agent's turns with the Responses API (`previous_response_id`), so the
   * router knows the endpoint that served a chain's last turn (`response-chain-scorer` reads it).
   */
  responsesChains: z.boolean().default(false),
  /**
   * Router replicas behind a load balancer without affinity (requests spread over them in turn),
   * each with its own prefix index, in-flight counts and flow control, as llm-d's active-active mode.
   */
  routers: z.int().positive().default(1),
  /** Objective name → TTFT target (ms) its clients send as `x-llm-d-slo-ttft-ms`. */
  ttftSloMs: z.record(z.string(), positive).default({}),
  slo: z
    .strictObject({ ttftMs: positive.default(2000), itlMs: positive.default(50) })
    .default({ ttftMs: 2000, itlMs: 50 }),
  price: z.strictObject({ gpuHour: positive.default(2.71) }).default({ gpuHour: 2.71 }),
});

/** A validated scenario plus where it came from. */
export type Scenario = z.output<typeof scenarioSchema> & { baseDir: string; file: string };
/** The workload section. */
export type WorkloadSpec = Scenario["workload"];

/** Parses and validates YAML text; `overrides` are `dotted.path=value` (value parsed as YAML). */
export function parseScenario(text: string, file: string, overrides: readonly string[] = []): Scenario {
  const doc = (parseYaml(text) ?? {}) as Record<string, unknown>;
  for (const o of overrides) applyOverride(doc, o);
  const parsed = scenarioSchema.safeParse(doc);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new LlmdError("invalid_scenario", `${file}: ${detail}`);
  }
  return { ...parsed.data, baseDir: dirname(resolve(file)), file };
}

/** How the scenario's clients present themselves: tenants' API keys and objectives' TTFT targets. */
export function clientIdentity(scenario: Scenario): ClientIdentity {
  const apiKeys = new Map((scenario.tenants ?? []).map((t) => [t.name, t.apiKeys[0]!] as const));
  return { apiKeys, ttftSloMs: scenario.ttftSloMs };
}

/** Reads and validates a scenario file. */
export function loadScenario(file: string, overrides: readonly string[] = []): Scenario {
  return parseScenario(readFileSync(file, "utf8"), file, overrides);
}

/** Sets `a.b.c=value` in a plain object tree, creating objects on the way. */
export function applyOverride(doc: Record<string, unknown>, assignment: string): void {
  const eq = assignment.indexOf("=");
  if (eq <= 0) throw new LlmdError("invalid_override", `expected key=value, got "${assignment}"`);
  const keys = assignment.slice(0, eq).split(".");
  let node = doc;
  for (const key of keys.slice(0, -1)) {
    const child = node[key];
    node = (typeof child === "object" && child !== null ? child : (node[key] = {})) as Record<
      string,
      unknown
    >;
  }
  node[keys.at(-1)!] = parseYaml(assignment.slice(eq + 1));
}

/** The router config text of a scenario (file paths resolve against the scenario's directory). */
export function routerConfigText(scenario: Scenario): string {
  if ("configText" in scenario.router) return scenario.router.configText;
  return readFileSync(resolve(scenario.baseDir, scenario.router.config), "utf8");
}
