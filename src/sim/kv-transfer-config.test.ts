import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSimConfig } from "./config.ts";
import { kvTransferEnvLayer } from "./kv-transfer-config.ts";

describe("--kv-transfer-config", () => {
  it("reads vLLM's JSON, with recompute as the default failure policy", () => {
    const parsed = parseSimConfig({
      model: "m",
      "kv-transfer-config":
        '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_buffer_device":"cuda"}',
    });
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.config["kv-transfer-config"], {
      connector: "NixlConnector",
      role: "kv_producer",
      engineId: undefined,
      failurePolicy: "recompute",
    });
    assert.equal(parsed.config["kv-abort-timeout"], 480_000);
    assert.equal(parsed.config["kv-transfer-link"], "infiniband");
  });

  it("refuses an unknown role, bad JSON and an unknown link, naming the key", () => {
    const bad = [
      { "kv-transfer-config": '{"kv_connector":"NixlConnector","kv_role":"kv_sideways"}' },
      { "kv-transfer-config": "{not json" },
      { "kv-transfer-link": "carrier-pigeon" },
    ];
    for (const layer of bad) {
      const parsed = parseSimConfig({ model: "m" }, layer);
      assert.equal(parsed.ok, false);
      assert.match(parsed.ok ? "" : parsed.error, /kv-transfer-(config|link)/);
    }
  });

  it("takes vLLM's NIXL environment variables, which flags override", () => {
    const env = kvTransferEnvLayer({
      VLLM_NIXL_SIDE_CHANNEL_HOST: "10.0.0.3",
      VLLM_NIXL_SIDE_CHANNEL_PORT: "5600",
      VLLM_NIXL_ABORT_REQUEST_TIMEOUT: "30",
    });
    const parsed = parseSimConfig({ model: "m" }, env, { "kv-side-channel-port": "5601" });
    assert.ok(parsed.ok);
    assert.equal(parsed.config["kv-side-channel-host"], "10.0.0.3");
    assert.equal(parsed.config["kv-side-channel-port"], 5601);
    assert.equal(parsed.config["kv-abort-timeout"], 30_000);
  });
});
