/**
 * Every EndpointPickerConfig llm-d ships (read in place from ../shared/data/llm-d-configs) either
 * loads, or fails naming exactly the llm-d plugin types llmd does not implement yet.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parse as parseYaml } from "yaml";
import { parseConfig } from "../../src/config/load.ts";
import { endpointPoolOptionsFromConfig } from "../../src/config/pool-options.ts";
import { parseEndpointList } from "../../src/endpoints/sources/static-source.ts";

const DIR = join(import.meta.dirname, "../../../shared/data/llm-d-configs");

/** File → unimplemented plugin types its error must name (empty: it must load). */
const EXPECTED: Record<string, string[]> = {
  "dp-epp-config.yaml": [],
  "epp-burst-prefix-cache-config.yaml": [],
  "epp-config.yaml": [],
  "epp-estimate-prefix-cache-config.yaml": [],
  "epp-mm-embeddings-cache-config.yaml": [],
  "epp-precise-prefix-cache-config.yaml": [],
  "pd-epp-config.yaml": [],
  "pd-topology-epp-config.yaml": [],
  "probabilistic-admitter-epp-config.yaml": [],
  "sim-e-p-d-epp-config.yaml": [],
  "sim-e-pd-epp-config.yaml": [],
  "sim-epp-config.yaml": [],
  "sim-epp-gpu-config.yaml": [],
  "sim-epp-kvcache-config.yaml": [],
  "sim-epp-no-hit-lru.yaml": [],
  "sim-epp-tokenizer-vllm-http-config.yaml": [],
  "sim-pd-epp-config.yaml": [],
  "sim-program-aware-config.yaml": [],
  "soft-reflective-ceiling-epp-config.yaml": [],
};

/** Files whose plugins include alpha types: they load with llm-d's --allow-experimental-plugins. */
const EXPERIMENTAL = new Set([
  "pd-topology-epp-config.yaml",
  "sim-epp-gpu-config.yaml",
  "epp-burst-prefix-cache-config.yaml",
]);

test("the table covers all 19 shipped configs", () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith(".yaml"));
  assert.equal(files.length, 19);
  assert.deepEqual(files.sort(), Object.keys(EXPECTED).sort());
});

for (const [file, unimplemented] of Object.entries(EXPECTED)) {
  test(`${file}: ${unimplemented.length === 0 ? "loads" : `needs ${unimplemented.join(", ")}`}`, () => {
    const text = readFileSync(join(DIR, file), "utf8");
    const result = parseConfig(text, { allowExperimentalPlugins: EXPERIMENTAL.has(file) });
    if (unimplemented.length === 0) {
      assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.issues, null, 1));
      const declared = (
        (parseYaml(text) as { schedulingProfiles?: { name: string }[] }).schedulingProfiles ?? []
      ).map((p) => p.name);
      assert.deepEqual(
        [...result.config.scheduler.parts.profiles.keys()],
        declared.length > 0 ? declared : ["default"],
        "the file's scheduling profiles, in order",
      );
      return;
    }
    assert.ok(!result.ok, "expected a failure naming the unimplemented plugins");
    assert.deepEqual(result.issues.map((i) => i.unimplementedType).sort(), [...unimplemented].sort());
    for (const issue of result.issues)
      assert.match(issue.message, /not implemented in llmd \(.+ \(not built[:)]/);
  });
}

test("the shipped default config routes through a decode filter, prefix scorer (weight 2) and max-score picker", () => {
  const result = parseConfig(readFileSync(join(DIR, "epp-config.yaml"), "utf8"));
  assert.ok(result.ok);
  const profile = result.config.scheduler.parts.profiles.get("default")!;
  assert.deepEqual(
    profile.filters.map((f) => f.type),
    ["decode-filter"],
  );
  assert.deepEqual(
    profile.scorers.map((s) => [s.scorer.type, s.weight]),
    [["prefix-cache-scorer", 2]],
  );
  assert.equal(profile.picker.type, "max-score-picker");
  assert.ok(result.config.plugins.has("approx-prefix-cache-producer"), "default producer auto-added");
  assert.match(result.config.warnings.join("\n"), /llm-d.ai\/v1alpha1 is deprecated/);
});

test("flow-control configs keep their validated flowControl section and gate", () => {
  const result = parseConfig(readFileSync(join(DIR, "sim-program-aware-config.yaml"), "utf8"));
  assert.ok(result.ok);
  assert.equal(result.config.featureGates.flowControl, true);
  assert.equal(result.config.flowControl?.defaultPriorityBand.fairnessPolicyRef, "program-aware-fairness");
  assert.equal(result.config.flowControl?.defaultRequestTTL, 60_000);
});

test("the data-parallel sample runs its profile through data-parallel-profile-handler (deprecated, warns)", () => {
  const result = parseConfig(readFileSync(join(DIR, "dp-epp-config.yaml"), "utf8"));
  assert.ok(result.ok);
  assert.equal(result.config.scheduler.parts.profileHandler.type, "data-parallel-profile-handler");
  assert.match(result.config.warnings.join("\n"), /"data-parallel-profile-handler" is deprecated/);
});

test("the precise-prefix sample wires the KV-event producer into its data layer and its scorer", () => {
  const result = parseConfig(readFileSync(join(DIR, "epp-precise-prefix-cache-config.yaml"), "utf8"));
  assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.issues));
  const { discovery, pipeline, metrics } = result.config.dataLayerPlugins;
  assert.equal(discovery, undefined);
  assert.deepEqual(
    pipeline.map((p) => p.type),
    ["metrics-data-source", "core-metrics-extractor", "endpoint-notification-source"],
  );
  assert.equal(metrics, true);
  assert.equal(
    result.config.plugins.get("precise-prefix-cache-producer")?.type,
    "precise-prefix-cache-producer",
  );
  assert.ok(!result.config.plugins.has("approx-prefix-cache-producer"), "no approximate producer auto-added");
});

test("the multimodal sample scores encoder-cache affinity (weight 4) beside precise prefix (10) and queue (1)", () => {
  const result = parseConfig(readFileSync(join(DIR, "epp-mm-embeddings-cache-config.yaml"), "utf8"));
  assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.issues));
  const profile = result.config.scheduler.parts.profiles.get("default")!;
  assert.deepEqual(
    profile.scorers.map((s) => [s.scorer.type, s.weight]),
    [
      ["prefix-cache-scorer", 10],
      ["mm-embeddings-cache-scorer", 4],
      ["queue-scorer", 1],
    ],
  );
  const producers = result.config.scheduler.parts.producers.map((p) => p.type);
  assert.ok(producers.includes("mm-embeddings-cache-producer"), producers.join(", "));
});

test("the GPU sample polls DCGM on port 9400 every second and filters, then scores, on GPUUtilization", () => {
  const text = readFileSync(join(DIR, "sim-epp-gpu-config.yaml"), "utf8");
  const result = parseConfig(text, { allowExperimentalPlugins: true });
  assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.issues));
  const options = endpointPoolOptionsFromConfig(result.config, {
    endpoints: parseEndpointList("10.0.0.1:8000"),
  });
  const [dcgm, ...others] = options.attributeSources ?? [];
  assert.deepEqual(others, []);
  assert.deepEqual(
    { ...dcgm, extractors: dcgm?.extractors.length },
    {
      name: "dcgm-source",
      scheme: "http",
      path: "/metrics",
      port: 9400,
      insecureSkipVerify: true,
      intervalMs: 1000,
      extractors: 1,
    },
  );
  assert.equal(options.metricsPath, "/metrics", "the default metrics source is injected beside it");
  const profile = result.config.scheduler.parts.profiles.get("default")!;
  assert.deepEqual(
    profile.filters.map((f) => f.name),
    ["decode-filter", "gpu-utilization-filter"],
  );
  assert.deepEqual(
    profile.scorers.map((s) => [s.scorer.name, s.weight]),
    [
      ["gpu-utilization-scorer", 2],
      ["kv-cache-utilization-scorer", 1],
    ],
  );
});
