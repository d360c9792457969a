/**
 * The data layer of a config: wiring checks, injected defaults, and `endpointPoolOptionsFromConfig`
 * (config parameters in effect, flags overriding).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { endpointPoolOptionsFromConfig, loadConfig, parseConfig } from "../../src/config/index.ts";
import { roundToTick } from "../../src/config/pool-options.ts";

const header = "apiVersion: llm-d.ai/v1\nkind: EndpointPickerConfig\n";
const STATIC = [
  { key: "default/a", name: "a", namespace: "default", address: "127.0.0.1", port: 8000, labels: {} },
];

function issuesOf(body: string): string {
  const result = parseConfig(header + body);
  assert.ok(!result.ok, "expected the config to be rejected");
  return result.issues.map((i) => `${i.path}: ${i.message}`).join("\n");
}

test("no dataLayer section: llm-d's default metrics source and extractor are injected", () => {
  const runtime = loadConfig(`${header}plugins: [{type: queue-scorer}]`);
  assert.equal(runtime.plugins.get("metrics-data-source")?.type, "metrics-data-source");
  assert.equal(runtime.plugins.get("core-metrics-extractor")?.type, "core-metrics-extractor");
  const options = endpointPoolOptionsFromConfig(runtime, { endpoints: STATIC });
  assert.equal(options.source.kind, "static");
  assert.equal(options.metricsPath, "/metrics");
  assert.equal(options.scheme, "http");
  assert.equal(options.scrapeIntervalMs, 50);
  assert.equal(options.metricsSpecs?.defaultEngine, "vllm");
});

test("listed data-layer plugins take effect even without dataLayer wiring (injectDefaults)", () => {
  const runtime = loadConfig(`${header}plugins:
- {type: metrics-data-source, parameters: {path: /stats, port: 9100, interval: 200ms}}
- {type: core-metrics-extractor, parameters: {defaultEngine: sglang}}
- {type: queue-scorer}`);
  const options = endpointPoolOptionsFromConfig(runtime, { endpoints: STATIC });
  assert.equal(options.metricsPath, "/stats");
  assert.equal(options.metricsPort, 9100);
  assert.equal(options.scrapeIntervalMs, 200);
  assert.equal(options.metricsSpecs?.defaultEngine, "sglang");
  assert.deepEqual(runtime.warnings, []);
});

test("the wired pipeline is used; flags override interval base, staleness and discovery", () => {
  const runtime = loadConfig(`${header}plugins:
- {type: metrics-data-source, name: scrape, parameters: {scheme: https, interval: 130ms}}
- {type: core-metrics-extractor, name: extract, parameters: {engineLabelKey: engine}}
- {type: file-discovery, name: files, parameters: {path: /etc/llmd/endpoints.yaml}}
- {type: queue-scorer}
dataLayer:
  sources: [{pluginRef: scrape, extractors: [{pluginRef: extract}]}]
  discovery: {endpoints: {pluginRef: files}}`);
  const fromConfig = endpointPoolOptionsFromConfig(runtime);
  assert.equal(fromConfig.source.kind, "file");
  assert.equal(fromConfig.scheme, "https");
  assert.equal(fromConfig.scrapeIntervalMs, 150, "130 ms rounds to 3 ticks of 50 ms");
  assert.equal(fromConfig.metricsSpecs?.engineLabelKey, "engine");
  assert.equal(runtime.plugins.has("metrics-data-source"), false, "nothing injected next to a wired source");
  const flagged = endpointPoolOptionsFromConfig(runtime, {
    endpoints: STATIC,
    scrapeIntervalMs: 100,
    stalenessThresholdMs: 500,
  });
  assert.equal(flagged.source.kind, "static", "--endpoints beats dataLayer.discovery");
  assert.equal(flagged.scrapeIntervalMs, 100);
  assert.equal(flagged.stalenessThresholdMs, 500);
  assert.equal(endpointPoolOptionsFromConfig(runtime, { endpointsFile: "/tmp/x.yaml" }).source.kind, "file");
});

test("interval rounding follows llm-d: nearest multiple of the base tick, at least one tick", () => {
  assert.equal(roundToTick(undefined, 50), 50);
  assert.equal(roundToTick(10, 50), 50);
  assert.equal(roundToTick(1000, 50), 1000);
  assert.equal(roundToTick(1020, 50), 1000);
  assert.equal(roundToTick(1030, 50), 1050);
  assert.equal(roundToTick(1000, 0), 0, "base 0 keeps refresh-only mode");
});

test("injectDefaults: false without a metrics source turns scraping into health probing", () => {
  const runtime = loadConfig(`${header}plugins: [{type: queue-scorer}]\ndataLayer: {injectDefaults: false}`);
  assert.equal(runtime.plugins.has("metrics-data-source"), false);
  assert.equal(endpointPoolOptionsFromConfig(runtime, { endpoints: STATIC }).metricsPath, "");
});

test("models and endpoint-notification sources are accepted and change nothing", () => {
  const runtime = loadConfig(`${header}plugins:
- {type: models-data-source}
- {type: models-data-extractor}
- {type: endpoint-notification-source}
- {type: queue-scorer}
dataLayer:
  sources:
  - {pluginRef: models-data-source, extractors: [{pluginRef: models-data-extractor}]}
  - {pluginRef: endpoint-notification-source, extractors: [{pluginRef: queue-scorer}]}`);
  const options = endpointPoolOptionsFromConfig(runtime, { endpoints: STATIC });
  assert.equal(options.metricsPath, "/metrics");
  assert.equal(options.modelsIntervalMs, undefined, "the pool's own /v1/models polling stays on");
});

test("wiring errors name their path", () => {
  assert.match(
    issuesOf("plugins: [{type: queue-scorer}]\ndataLayer: {sources: [{pluginRef: queue-scorer}]}"),
    /dataLayer.sources\[0\].pluginRef: plugin "queue-scorer" \(queue-scorer\) is not a data-source plugin/,
  );
  assert.match(
    issuesOf(`plugins: [{type: metrics-data-source}, {type: models-data-extractor}]
dataLayer: {sources: [{pluginRef: metrics-data-source, extractors: [{pluginRef: models-data-extractor}]}]}`),
    /extractors\[0\].pluginRef: plugin "models-data-extractor" \(models-data-extractor\) cannot read what "metrics-data-source"/,
  );
  assert.match(
    issuesOf(
      "plugins: [{type: metrics-data-source}]\ndataLayer: {discovery: {endpoints: {pluginRef: metrics-data-source}}}",
    ),
    /dataLayer.discovery.endpoints.pluginRef: plugin "metrics-data-source" \(metrics-data-source\) is not a discovery plugin/,
  );
  assert.match(
    issuesOf(`plugins: [{type: metrics-data-source, name: a}, {type: metrics-data-source, name: b}]
dataLayer: {sources: [{pluginRef: a}, {pluginRef: b}]}`),
    /dataLayer.sources: llmd's endpoint pool runs one metrics-data-source, found 2/,
  );
  assert.match(
    issuesOf("plugins: [{type: file-discovery, parameters: {path: /x, watch: true}}]"),
    /plugins\[0\].parameters: unknown field\(s\) "watch"/,
  );
  assert.match(
    issuesOf("plugins: [{type: file-discovery}]"),
    /plugins\[0\].parameters.path: expected the endpoints file path/,
  );
});

test("unwired discovery and ignored sections are warnings", () => {
  const runtime = loadConfig(`${header}plugins:
- {type: file-discovery, parameters: {path: /x}}
- {type: queue-scorer}
dataLayer: {crossReplica: {syncerPluginRef: queue-scorer}}`);
  assert.match(
    runtime.warnings.join("\n"),
    /plugins\[0\]: plugin "file-discovery" \(file-discovery\) is not wired in dataLayer/,
  );
  assert.match(runtime.warnings.join("\n"), /dataLayer.crossReplica: ignored/);
});

test("no endpoints anywhere is an LlmdError naming the ways to give them", () => {
  const runtime = loadConfig(`${header}plugins: [{type: queue-scorer}]`);
  assert.throws(
    () => endpointPoolOptionsFromConfig(runtime),
    (err: unknown) =>
      err instanceof Error &&
      (err as { code?: string }).code === "no_endpoints_configured" &&
      /--endpoints-file.*file-discovery/.test(err.message),
  );
});
