/** The pool against the real `llmd sim` (vLLM-compatible metrics and /v1/models) on loopback. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { EndpointPool } from "../../src/endpoints/pool.ts";
import { parseEndpointList, staticSource } from "../../src/endpoints/sources/static-source.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, startTestSim } from "../sim/helpers.ts";
import { waitFor } from "./fake-engine.ts";

describe("EndpointPool against llmd sim", () => {
  let sim: SimServer;
  let pool: EndpointPool;
  before(async () => {
    sim = await startTestSim({
      "inter-token-latency": "20ms",
      "max-num-seqs": 2,
      "max-loras": 2,
      "lora-modules": [{ name: "lora-a", path: "/loras/a" }],
    });
    pool = new EndpointPool({
      source: staticSource(parseEndpointList(sim.url)),
      scrapeIntervalMs: 10,
      modelsIntervalMs: 50,
      unhealthyAfterFailures: 2,
      log: () => {},
    });
    await pool.start();
  });
  after(async () => {
    await pool.stop();
    await sim.close();
  });

  it("reads cache geometry, LoRA capacity and served models", () => {
    const [endpoint] = pool.candidates(MODEL);
    assert.ok(endpoint);
    assert.equal(endpoint.metrics.cacheBlockSize, 16);
    assert.ok(endpoint.metrics.cacheNumBlocks > 0);
    assert.equal(endpoint.metrics.maxActiveModels, 2);
    assert.deepEqual(pool.models(), ["lora-a", MODEL].sort());
    assert.equal(pool.candidates("lora-a").length, 1);
    assert.equal(pool.counters().extractErrorsTotal, 0);
  });

  it("sees requests running and waiting while the simulator works, and idle after", async () => {
    const endpoint = pool.candidates()[0]!;
    const body = JSON.stringify({ model: MODEL, prompt: "count to twenty please", max_tokens: 8 });
    const requests = Array.from({ length: 4 }, () =>
      fetch(`${sim.url}/v1/completions`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
      }),
    );
    await waitFor(
      () => endpoint.metrics.runningRequestsSize === 2 && endpoint.metrics.waitingQueueSize === 2,
      "2 running and 2 waiting in the scraped metrics",
    );
    assert.ok(endpoint.metrics.kvCacheUsagePercent > 0);
    await Promise.all((await Promise.all(requests)).map((r) => r.text()));
    await waitFor(() => endpoint.metrics.runningRequestsSize === 0, "an idle engine after the requests");
  });

  it("drops the simulator when it dies and takes it back when it restarts", async () => {
    const key = pool.candidates()[0]!.metadata.key;
    await sim.close();
    await waitFor(() => pool.candidates().length === 0, "the dead simulator to leave the candidates");
    assert.equal(pool.get(key)!.status.health, "unhealthy");
    sim = await startTestSim({ port: sim.port });
    await waitFor(() => pool.candidates().length === 1, "the restarted simulator to be a candidate again");
    await waitFor(() => !pool.models().includes("lora-a"), "the restarted simulator's model list (no LoRA)");
  });
});
