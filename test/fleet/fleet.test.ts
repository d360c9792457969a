import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadScenario, parseScenario } from "../../src/workload/scenario.ts";
import { loadConfig } from "../../src/config/index.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { dataLayerPlugins } from "../../src/endpoints/data-layer/index.ts";
import { runScenario } from "../../src/fleet/run-scenario.ts";
import { flowControlPlugins } from "../../src/flow-control/plugins.ts";
import { type AnyPluginDefinition, PluginRegistry } from "../../src/plugin/registry.ts";
import type { DataProducer } from "../../src/scheduler/framework/types.ts";
import { schedulingPlugins } from "../../src/scheduler/plugins/index.ts";

const here = dirname(fileURLToPath(import.meta.url));
const policies = join(here, "../../examples/scenarios/policies");

function scenario(yaml: string, overrides: string[] = []) {
  return parseScenario(yaml, join(policies, "inline.yaml"), overrides);
}

describe("fleet simulator on a tiny trace (hand-computed)", () => {
  // r0: blocks [0,1] (1024 tokens); r1 10 s later: [0,1,2] (1536); r2: [3,4] (600 = 512 + 88).
  // One infinite cache: r1 hits 1024 tokens, the others 0 → ideal = 1024 / 3160.
  const yaml = `
durationS: 30
drainS: 30
fleet: { replicas: 1 }
router: { config: llm-d-default.yaml }
workload: { type: mooncake, path: ${join(here, "fixtures/tiny-mooncake.jsonl")} }
`;

  it("one replica captures the whole ideal ceiling", async () => {
    const run = await runScenario(scenario(yaml));
    const s = run.summary;
    assert.equal(s.completed, 3);
    assert.deepEqual(
      run.result.records.map((r) => [r.cachedTokens, r.idealCachedTokens]),
      [
        [0, 0],
        [1024, 1024],
        [0, 0],
      ],
    );
    assert.equal(s.idealHitRate, 1024 / 3160);
    assert.equal(s.hitRate, 1024 / 3160);
    assert.equal(s.captured, 1);
    assert.equal(s.loadSpread, 1);
    // r1 recomputes only 512 of 1536 prompt tokens, so it reaches its first token faster than r0
    const [r0, r1] = run.result.records;
    assert.ok(r1!.firstTokenMs - r1!.arrivalMs < r0!.firstTokenMs - r0!.arrivalMs);
  });

  it("random routing over many replicas loses reuse the ceiling still counts", async () => {
    const run = await runScenario(
      scenario(yaml, ["fleet.replicas=8", "router.config=random.yaml", "seed=3"]),
    );
    const r1 = run.result.records[1]!;
    assert.equal(r1.idealCachedTokens, 1024);
    const sameEndpoint = r1.endpoint === run.result.records[0]!.endpoint;
    assert.equal(r1.cachedTokens, sameEndpoint ? 1024 : 0);
    assert.equal(run.summary.captured, sameEndpoint ? 1 : 0);
  });
});

describe("fleet simulator determinism", () => {
  const yaml = `
seed: 5
durationS: 30
drainS: 30
fleet: { replicas: 3, engine: { maxModelLen: 1048576 } }
router: { config: llm-d-default.yaml }
workload: { type: agentic, sessions: 6, rampS: 3 }
`;

  it("the same seed gives identical records; another seed does not", async () => {
    const a = await runScenario(scenario(yaml));
    const b = await runScenario(scenario(yaml));
    assert.ok(a.result.records.length > 6);
    assert.deepEqual(a.result.records, b.result.records);
    assert.deepEqual(a.summary, b.summary);
    const c = await runScenario(scenario(yaml, ["seed=6"]));
    assert.notDeepEqual(a.result.records, c.result.records);
  });
});

describe("fleet simulator with an asynchronous producer", () => {
  /** The built-in registry, with `approx-prefix-cache-producer` answering a microtask later. */
  function asyncPrefixProducerRegistry(): PluginRegistry {
    const builtin = schedulingPlugins.find((d) => d.type === "approx-prefix-cache-producer")!;
    const deferred: AnyPluginDefinition = {
      ...builtin,
      create: (params, env) => {
        const inner = builtin.create(params, env) as DataProducer;
        const produce: DataProducer["produce"] = async (ctx, endpoints) => {
          await null;
          await inner.produce(ctx, endpoints);
        };
        return new Proxy(inner, {
          get: (target, key) => {
            if (key === "produce") return produce;
            const value = Reflect.get(target, key, target);
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
      },
    };
    const scheduling = schedulingPlugins.map((d) => (d === builtin ? deferred : d));
    return new PluginRegistry([...scheduling, ...flowControlPlugins, ...dataLayerPlugins]);
  }

  it("dispatches in the same order and gives the same records as with synchronous producers", async () => {
    // Flow control queues requests, so a wake-up dispatches several at once: the asynchronous path
    // must finish each dispatch and then resume the rest of that step, as the synchronous one does.
    const tenants = join(here, "../../examples/scenarios/tenants/tenants.yaml");
    const overrides = [
      "router.config=ours.yaml",
      "fleet.replicas=2",
      "durationS=8",
      "warmupS=0",
      "workload.load=0.5",
    ];
    const sync = await runScenario(loadScenario(tenants, overrides));
    const deferred = await runScenario(
      loadScenario(tenants, overrides),
      undefined,
      asyncPrefixProducerRegistry(),
    );
    assert.ok(
      sync.result.records.some((r) => r.queuedMs > 0),
      "some requests waited in flow control",
    );
    assert.deepEqual(deferred.result.records, sync.result.records);
  });
});

describe("scenario files", () => {
  it("reject unknown fields with their path", () => {
    assert.throws(
      () =>
        scenario(
          "durationS: 1\nfleet: { replicas: 1, gpus: 2 }\nrouter: { config: x }\nworkload: { type: chat, sessions: 1 }",
        ),
      /fleet: Unrecognized key: "gpus"/,
    );
  });
  it("apply --set overrides before validation", () => {
    const s = scenario(
      "durationS: 1\nfleet: { replicas: 1 }\nrouter: { config: x }\nworkload: { type: chat, sessions: 1 }",
      ["workload.sessions=12", "fleet.engine.blockSize=32"],
    );
    assert.equal(s.workload.type === "chat" && s.workload.sessions, 12);
    assert.equal(s.fleet.engine.blockSize, 32);
  });
});

describe("examples/scenarios", () => {
  const dir = join(here, "../../examples/scenarios");
  it("every policy loads with the real config loader and every scenario validates", () => {
    const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
    const policyFiles = readdirSync(join(dir, "policies")).filter((f) => f.endsWith(".yaml"));
    assert.ok(files.length >= 4 && policyFiles.length >= 6);
    for (const f of policyFiles)
      assert.ok(
        loadConfig(
          { path: join(dir, "policies", f) },
          { clock: new ManualClock(), allowExperimentalPlugins: true },
        ).scheduler,
        f,
      );
    for (const f of files) assert.ok(loadScenario(join(dir, f)).fleet.replicas > 0, f);
  });
});
