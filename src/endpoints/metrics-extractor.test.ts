import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { emptyMetrics } from "./endpoint.ts";
import { ENGINE_LABEL } from "./engine-configs.ts";
import { MetricsExtractor, createExtractorSelector } from "./metrics-extractor.ts";
import { parseMetricSpec } from "./metric-spec.ts";

const vllmPage = readFileSync(new URL("./testdata/vllm-metrics.txt", import.meta.url), "utf8");
const sglangPage = readFileSync(new URL("./testdata/sglang-metrics.txt", import.meta.url), "utf8");
const select = createExtractorSelector();

function extract(page: string, labels: Record<string, string> = {}) {
  const metrics = emptyMetrics();
  const attributes = new Map<string, unknown>();
  const errors = select(labels).extract(page, metrics, attributes);
  return { metrics, attributes, errors };
}

describe("MetricsExtractor", () => {
  it("reads a vLLM page: queue, running, KV usage, cache config, newest LoRA sample", () => {
    const { metrics, errors } = extract(vllmPage);
    assert.equal(errors, 0);
    assert.equal(metrics.waitingQueueSize, 4);
    assert.equal(metrics.runningRequestsSize, 7);
    assert.equal(metrics.kvCacheUsagePercent, 0.4375);
    assert.equal(metrics.cacheBlockSize, 16);
    assert.equal(metrics.cacheNumBlocks, 52000);
    assert.deepEqual(metrics.activeModels, ["sql-lora", "chat-lora"]);
    assert.deepEqual(metrics.waitingModels, []);
    assert.equal(metrics.maxActiveModels, 4);
  });

  it("reads an SGLang page when the endpoint is labelled sglang", () => {
    const { metrics, errors } = extract(sglangPage, { [ENGINE_LABEL]: "sglang" });
    assert.equal(errors, 0);
    assert.deepEqual(
      [metrics.waitingQueueSize, metrics.runningRequestsSize, metrics.kvCacheUsagePercent],
      [3, 12, 0.71],
    );
    assert.deepEqual([metrics.cacheBlockSize, metrics.cacheNumBlocks], [64, 9000]);
  });

  it("counts missing required metrics as extract errors and keeps previous values", () => {
    const metrics = emptyMetrics();
    metrics.kvCacheUsagePercent = 0.5;
    const errors = select({}).extract("vllm:num_requests_waiting 2\n", metrics, new Map());
    assert.equal(errors, 2);
    assert.equal(metrics.waitingQueueSize, 2);
    assert.equal(metrics.kvCacheUsagePercent, 0.5);
  });

  it("sums queue and running over several engines and keeps the highest KV usage", () => {
    const page = [
      'vllm:num_requests_waiting{engine="0"} 2',
      'vllm:num_requests_waiting{engine="1"} 3',
      'vllm:num_requests_running{engine="0"} 1',
      'vllm:num_requests_running{engine="1"} 1',
      'vllm:kv_cache_usage_perc{engine="0"} 0.2',
      'vllm:kv_cache_usage_perc{engine="1"} 0.9',
      'vllm:kv_cache_usage_perc{engine="2"} NaN',
    ].join("\n");
    const { metrics } = extract(page);
    assert.deepEqual(
      [metrics.waitingQueueSize, metrics.runningRequestsSize, metrics.kvCacheUsagePercent],
      [5, 2, 0.9],
    );
  });

  it("honours custom engine configs with label filters and custom attributes", () => {
    const custom = createExtractorSelector({
      engineConfigs: [
        {
          name: "my-custom-engine",
          queuedRequestsSpec: "custom_queue_size{status=waiting}",
          runningRequestsSpec: 'custom_queue_size{status="running"}',
          kvUsageSpec: "custom_cache_utilization",
          customMetrics: [
            { attributeKey: "custom.queue_depth", metricSpec: "custom_queue_depth{tier=gold}" },
          ],
        },
      ],
    });
    const page =
      'custom_queue_size{status="waiting"} 8\ncustom_queue_size{status="running"} 6\n' +
      'custom_cache_utilization 0.3\ncustom_queue_depth{tier="silver"} 1\ncustom_queue_depth{tier="gold"} 11\n';
    const metrics = emptyMetrics();
    const attributes = new Map<string, unknown>();
    const errors = custom({ [ENGINE_LABEL]: "my-custom-engine" }).extract(page, metrics, attributes);
    assert.equal(errors, 0);
    assert.deepEqual(
      [metrics.waitingQueueSize, metrics.runningRequestsSize, metrics.kvCacheUsagePercent],
      [8, 6, 0.3],
    );
    assert.equal(attributes.get("custom.queue_depth"), 11);
  });

  it("reads block size and count from plain gauges (trtllm-serve)", () => {
    const page = "trtllm_kv_cache_tokens_per_block 32\ntrtllm_kv_cache_max_blocks 4096\n";
    const { metrics } = extract(page, { [ENGINE_LABEL]: "trtllm-serve" });
    assert.deepEqual([metrics.cacheBlockSize, metrics.cacheNumBlocks], [32, 4096]);
  });

  it("falls back to the default engine for unknown engine labels", () => {
    assert.equal(select({ [ENGINE_LABEL]: "nope" }).engine, "vllm");
    assert.equal(createExtractorSelector({ defaultEngine: "sglang" })({}).engine, "sglang");
  });

  it("rejects malformed specs at construction", () => {
    assert.throws(
      () => new MetricsExtractor({ name: "bad", queuedRequestsSpec: "9bad" }),
      /invalid metric spec/,
    );
  });
});

describe("parseMetricSpec", () => {
  it("parses bare and quoted label values", () => {
    assert.deepEqual(parseMetricSpec('nv_trt{request_type=waiting, model="a,b"}'), {
      name: "nv_trt",
      matchers: [
        ["request_type", "waiting"],
        ["model", "a,b"],
      ],
    });
    assert.deepEqual(parseMetricSpec("vllm:num_requests_waiting"), {
      name: "vllm:num_requests_waiting",
      matchers: [],
    });
  });

  for (const bad of ["", "a{b=c", "a{=c}", "a{b}", "a b"]) {
    it(`rejects ${JSON.stringify(bad)}`, () =>
      assert.throws(() => parseMetricSpec(bad), /invalid metric spec/));
  }
});
