/**
 * `llmd router` without endpoint flags: the config's `dataLayer.discovery` (llm-d `file-discovery`)
 * names the model servers, as in an llm-d deployment without Kubernetes.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Router, startRouter } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, startSims } from "./harness.ts";

describe("router with config discovery", () => {
  const dir = mkdtempSync(join(tmpdir(), "llmd-router-discovery-"));
  let sims: SimServer[];
  let router: Router;
  before(async () => {
    sims = await startSims(1);
    const port = new URL(sims[0]?.url ?? "").port;
    const file = join(dir, "endpoints.yaml");
    writeFileSync(file, `endpoints:\n- {name: e0, address: 127.0.0.1, port: "${port}"}\n`);
    router = await startRouter({
      config: `apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- {type: file-discovery, name: files, parameters: {path: ${JSON.stringify(file)}}}
- {type: queue-scorer}
dataLayer:
  discovery: {endpoints: {pluginRef: files}}`,
      port: 0,
      scrapeIntervalMs: 20,
      log: () => {},
    });
  });
  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves through the endpoint the config's file-discovery found", async () => {
    const res = await fetch(`${router.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, prompt: "hello", max_tokens: 2 }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-llmd-endpoint"), "default/e0");
    const body = (await res.json()) as { usage: { completion_tokens: number } };
    assert.equal(body.usage.completion_tokens, 2);
  });
});
