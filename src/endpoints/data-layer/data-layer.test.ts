/** llm-d data-layer definitions: parameter names, defaults, strict validation, and what each writes into the pool options. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isDataLayerPlugin, pluginKinds } from "../../scheduler/framework/guards.ts";
import { makeEnv } from "../../scheduler/framework/testing.ts";
import type { PluginDefinition } from "../../plugin/types.ts";
import {
  dataLayerPlugins,
  isPoolDataLayerPlugin,
  type PoolDataLayerPlugin,
  type PoolOptionsDraft,
} from "./index.ts";

const byType = new Map(dataLayerPlugins.map((d) => [d.type, d]));

function create(type: string, params: unknown = {}): PoolDataLayerPlugin {
  const definition = byType.get(type) as PluginDefinition;
  const plugin = definition.create(definition.parameters.parse(params), makeEnv(type));
  assert.ok(isPoolDataLayerPlugin(plugin) && isDataLayerPlugin(plugin));
  return plugin;
}

function draftOf(type: string, params: unknown = {}): PoolOptionsDraft {
  const draft: PoolOptionsDraft = {};
  create(type, params).configurePool(draft);
  return draft;
}

function issues(type: string, params: unknown): string {
  const parsed = byType.get(type)!.parameters.safeParse(params);
  assert.ok(!parsed.success, `${type} should reject ${JSON.stringify(params)}`);
  return parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n");
}

test("registered types, kinds and stability", () => {
  assert.deepEqual([...byType.keys()].sort(), [
    "core-metrics-extractor",
    "dcgm-data-source",
    "dcgm-extractor",
    "endpoint-notification-source",
    "file-discovery",
    "metrics-data-source",
    "models-data-extractor",
    "models-data-source",
  ]);
  assert.deepEqual(pluginKinds(create("metrics-data-source")), ["data-source"]);
  assert.deepEqual(pluginKinds(create("core-metrics-extractor")), ["extractor"]);
  assert.deepEqual(pluginKinds(create("file-discovery", { path: "/x" })), ["discovery"]);
  for (const d of dataLayerPlugins)
    assert.equal(d.stability, d.type.startsWith("dcgm-") ? "alpha" : "beta", d.type);
});

test("metrics-data-source: llm-d defaults", () => {
  assert.deepEqual(draftOf("metrics-data-source"), {
    scheme: "http",
    metricsPath: "/metrics",
    insecureSkipVerify: true,
  });
});

test("metrics-data-source: every parameter reaches the pool options", () => {
  const draft = draftOf("metrics-data-source", {
    scheme: "https",
    path: "/stats",
    insecureSkipVerify: false,
    caCertPath: "/ca.pem",
    clientCertPath: "/c.pem",
    clientKeyPath: "/k.pem",
    interval: "1s",
    port: "9090",
    families: ["vllm:num_requests_waiting"],
  });
  assert.deepEqual(draft, {
    scheme: "https",
    metricsPath: "/stats",
    insecureSkipVerify: false,
    metricsPort: 9090,
    scrapeIntervalMs: 1000,
    tlsFiles: { caCertPath: "/ca.pem", clientCertPath: "/c.pem", clientKeyPath: "/k.pem" },
  });
});

test("metrics-data-source: strict validation", () => {
  assert.match(issues("metrics-data-source", { schem: "http" }), /Unrecognized key/);
  assert.match(issues("metrics-data-source", { scheme: "ftp" }), /scheme/);
  assert.match(issues("metrics-data-source", { path: "metrics" }), /path: expected a URL path/);
  for (const port of [0, 70000, true, "80x", 1.5])
    assert.match(issues("metrics-data-source", { port }), /port: expected a port 1-65535/, String(port));
  assert.match(issues("metrics-data-source", { interval: "soon" }), /interval: expected a duration/);
  assert.match(
    issues("metrics-data-source", { clientCertPath: "/c.pem" }),
    /clientCertPath and clientKeyPath must be set together/,
  );
});

test("core-metrics-extractor: defaults and custom engines", () => {
  assert.deepEqual(draftOf("core-metrics-extractor").metricsSpecs, {
    engineLabelKey: "llm-d.ai/engine-type",
    defaultEngine: "vllm",
    engineConfigs: [],
  });
  const engine = {
    name: "my-engine",
    queuedRequestsSpec: "custom_queue_size{status=waiting}",
    customMetrics: [{ attributeKey: "custom.depth", metricSpec: "depth{tier=gold}", optional: true }],
  };
  const specs = draftOf("core-metrics-extractor", {
    engineLabelKey: "engine",
    defaultEngine: "my-engine",
    engineConfigs: [engine],
  }).metricsSpecs;
  assert.deepEqual(specs, {
    engineLabelKey: "engine",
    defaultEngine: "my-engine",
    engineConfigs: [
      { ...engine, customMetrics: [{ attributeKey: "custom.depth", metricSpec: "depth{tier=gold}" }] },
    ],
  });
});

test("core-metrics-extractor: malformed specs and unknown engines fail with their path", () => {
  assert.match(
    issues("core-metrics-extractor", { engineConfigs: [{ name: "e", kvUsageSpec: "bad name{" }] }),
    /engineConfigs.0.kvUsageSpec: invalid metric spec "bad name\{"/,
  );
  assert.match(
    issues("core-metrics-extractor", { defaultEngine: "tgi" }),
    /defaultEngine: unknown engine "tgi" \(known: vllm, sglang/,
  );
  assert.match(
    issues("core-metrics-extractor", { engineConfigs: [{ name: "e", queueSpec: "q" }] }),
    /queueSpec/,
  );
});

test("file-discovery: path is required, watchFile defaults to false; it becomes the pool's source", () => {
  assert.match(issues("file-discovery", {}), /path: expected the endpoints file path/);
  assert.match(issues("file-discovery", { path: "/x", watch: true }), /Unrecognized key/);
  const draft = draftOf("file-discovery", { path: "eps.yaml" });
  assert.equal(draft.source?.kind, "file");
  assert.equal(byType.get("file-discovery")!.parameters.parse({ path: "eps.yaml" }).watchFile, false);
});

test("parameterless sources accept the extractors they feed", () => {
  const models = create("models-data-source");
  const notifications = create("endpoint-notification-source");
  const metrics = create("metrics-data-source");
  assert.ok(models.accepts(create("models-data-extractor")));
  assert.ok(!models.accepts(create("core-metrics-extractor")));
  assert.ok(metrics.accepts(create("core-metrics-extractor")));
  assert.ok(!metrics.accepts(create("models-data-extractor")));
  assert.ok(notifications.accepts({ type: "precise-prefix-cache-producer", name: "p" }));
  assert.deepEqual(draftOf("models-data-source"), {});
  assert.match(issues("models-data-source", { interval: "1s" }), /Unrecognized key/);
});
