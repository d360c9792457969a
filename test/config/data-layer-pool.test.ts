/**
 * A config's data layer driving a real EndpointPool over loopback: file-discovery finds the
 * servers, metrics-data-source and core-metrics-extractor parameters decide what is scraped and
 * read, and data-parallel-profile-handler names the picked rank in `x-data-parallel-host-port`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { endpointPoolOptionsFromConfig, loadConfig } from "../../src/config/index.ts";
import { EndpointPool } from "../../src/endpoints/pool.ts";
import { UPSTREAM_HEADERS_STATE_KEY } from "../../src/scheduler/framework/data-keys.ts";
import { makeContext } from "../../src/scheduler/framework/testing.ts";

const dir = mkdtempSync(join(tmpdir(), "llmd-data-layer-"));
const servers: Server[] = [];
after(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

/** A fake model server answering `path` with `page` (and /v1/models); anything else is 404. */
async function modelServer(path: string, page: string): Promise<number> {
  const server = createServer((req, res) => {
    if (req.url === path) return void res.end(page);
    if (req.url === "/v1/models") return void res.end(JSON.stringify({ data: [{ id: "m" }] }));
    res.statusCode = 404;
    res.end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

function writeEndpoints(file: string, entries: string[]): void {
  writeFileSync(`${file}.tmp`, `endpoints:\n${entries.map((e) => `- ${e}`).join("\n")}\n`);
  renameSync(`${file}.tmp`, file);
}

const quiet = () => {};

test("file-discovery, a custom metrics path and a custom engine from the config, with reload", async () => {
  const page = 'my_queue{status="waiting"} 7\nmy_running 3\nmy_kv 0.25\nmy_depth{tier="gold"} 11\n';
  const port = await modelServer("/stats", page);
  const file = join(dir, "endpoints.yaml");
  writeEndpoints(file, [`{name: e0, address: 127.0.0.1, port: "${port}", labels: {engine: mine}}`]);
  const runtime = loadConfig(`apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- {type: file-discovery, name: files, parameters: {path: ${JSON.stringify(file)}, watchFile: true}}
- {type: metrics-data-source, name: scrape, parameters: {path: /stats}}
- type: core-metrics-extractor
  name: extract
  parameters:
    engineLabelKey: engine
    engineConfigs:
    - name: mine
      queuedRequestsSpec: my_queue{status=waiting}
      runningRequestsSpec: my_running
      kvUsageSpec: my_kv
      customMetrics: [{attributeKey: custom.depth, metricSpec: "my_depth{tier=gold}"}]
- {type: queue-scorer}
dataLayer:
  sources: [{pluginRef: scrape, extractors: [{pluginRef: extract}]}]
  discovery: {endpoints: {pluginRef: files}}`);
  const pool = new EndpointPool(endpointPoolOptionsFromConfig(runtime, { scrapeIntervalMs: 0, log: quiet }));
  await pool.start();
  try {
    const [e0] = pool.candidates();
    assert.ok(e0, "the endpoint from the file is ready (scraped at /stats, not /metrics)");
    assert.equal(e0.metadata.key, "default/e0");
    assert.equal(e0.metrics.waitingQueueSize, 7);
    assert.equal(e0.metrics.runningRequestsSize, 3);
    assert.equal(e0.metrics.kvCacheUsagePercent, 0.25);
    assert.equal(e0.attributes.get("custom.depth"), 11);
    assert.equal(pool.get("default/e0")?.status.extractErrors, 0);

    const changed = new Promise<void>((resolve) =>
      pool.on("change", () => pool.all().length === 2 && resolve()),
    );
    writeEndpoints(file, [
      `{name: e0, address: 127.0.0.1, port: "${port}", labels: {engine: mine}}`,
      `{name: e1, address: 127.0.0.1, port: "${port}"}`,
    ]);
    await changed;
    assert.deepEqual(
      pool.all().map((e) => e.metadata.key),
      ["default/e0", "default/e1"],
    );
  } finally {
    await pool.stop();
  }
});

test("data-parallel ranks from one file entry; the handler names the picked rank", async () => {
  const busy = await modelServer(
    "/metrics",
    "vllm:num_requests_waiting 9\nvllm:num_requests_running 1\nvllm:kv_cache_usage_perc 0.5\n",
  );
  const idle = await modelServer(
    "/metrics",
    "vllm:num_requests_waiting 0\nvllm:num_requests_running 1\nvllm:kv_cache_usage_perc 0.5\n",
  );
  const file = join(dir, "dp.yaml");
  writeEndpoints(file, [`{name: vllm-0, address: 127.0.0.1, port: "${busy},${idle}"}`]);
  const runtime = loadConfig(`apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- {type: file-discovery, parameters: {path: ${JSON.stringify(file)}}}
- {type: queue-scorer}
- {type: data-parallel-profile-handler, parameters: {primaryPort: 8000}}
dataLayer: {discovery: {endpoints: {pluginRef: file-discovery}}}`);
  assert.match(runtime.warnings.join(), /"data-parallel-profile-handler" is deprecated/);
  const pool = new EndpointPool(endpointPoolOptionsFromConfig(runtime, { scrapeIntervalMs: 0, log: quiet }));
  await pool.start();
  try {
    const endpoints = pool.candidates();
    assert.deepEqual(
      endpoints.map((e) => [e.metadata.key, e.metadata.dpRank]),
      [
        ["default/vllm-0-rank-0", 0],
        ["default/vllm-0-rank-1", 1],
      ],
    );
    const ctx = makeContext();
    await runtime.scheduler.prepare(ctx, endpoints);
    const result = runtime.scheduler.schedule(ctx, endpoints);
    assert.ok(!(result instanceof Error));
    const picked = result.profileResults.get(result.primaryProfileName)?.targetEndpoints[0];
    assert.equal(picked?.metadata.port, idle, "queue-scorer picks the idle rank");
    runtime.scheduler.preRequest(ctx, result);
    const headers = ctx.state.get(UPSTREAM_HEADERS_STATE_KEY) as Map<string, string>;
    assert.equal(headers.get("x-data-parallel-host-port"), `127.0.0.1:${idle}`);
  } finally {
    await pool.stop();
  }
});
