import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ManualClock } from "../../src/core/clock.ts";
import { EndpointPool, type EndpointPoolOptions } from "../../src/endpoints/pool.ts";
import { parseEndpointList, staticSource } from "../../src/endpoints/sources/static-source.ts";
import { FakeEngine, waitFor } from "./fake-engine.ts";

const quiet = () => {};

function poolFor(urls: string[], options: Partial<EndpointPoolOptions> = {}): EndpointPool {
  return new EndpointPool({
    source: staticSource(parseEndpointList(urls.join(","))),
    log: quiet,
    ...options,
  });
}

describe("EndpointPool over real HTTP", () => {
  const engine = new FakeEngine();
  before(() => engine.start());
  after(() => engine.stop());

  it("scrapes metrics into Endpoint.metrics and lists served models", async () => {
    Object.assign(engine.state, { waiting: 3, running: 5, kvUsage: 0.25, models: ["m1", "lora-a"] });
    const pool = poolFor([engine.url], { scrapeIntervalMs: 0 });
    await pool.start();
    const [endpoint] = pool.candidates();
    assert.ok(endpoint);
    assert.deepEqual(
      [
        endpoint.metrics.waitingQueueSize,
        endpoint.metrics.runningRequestsSize,
        endpoint.metrics.kvCacheUsagePercent,
      ],
      [3, 5, 0.25],
    );
    assert.deepEqual([endpoint.metrics.cacheBlockSize, endpoint.metrics.cacheNumBlocks], [16, 2048]);
    assert.deepEqual(pool.models(), ["lora-a", "m1"]);
    assert.equal(pool.candidates("lora-a").length, 1);
    assert.equal(pool.candidates("unknown-model").length, 0);
    assert.equal(pool.counters().scrapesTotal, 1);
    await pool.stop();
  });

  it("counts dispatches since the last scrape and resets them when a scrape lands", async () => {
    const pool = poolFor([engine.url], { scrapeIntervalMs: 0 });
    await pool.start();
    const key = pool.all()[0]!.metadata.key;
    pool.noteDispatched(key);
    pool.noteDispatched(key);
    assert.equal(pool.get(key)!.metrics.dispatchedSinceScrape, 2);
    await pool.refresh();
    assert.equal(pool.get(key)!.metrics.dispatchedSinceScrape, 0);
    await pool.stop();
  });

  it("keeps counting dispatches made while a scrape was in flight (they are not on its page)", async () => {
    const pool = poolFor([engine.url], { scrapeIntervalMs: 0 });
    await pool.start();
    const key = pool.all()[0]!.metadata.key;
    pool.noteDispatched(key);
    engine.state.metricsDelayMs = 60;
    const landed = pool.refresh();
    pool.noteDispatched(key);
    pool.noteDispatched(key);
    await landed;
    engine.state.metricsDelayMs = 0;
    assert.equal(pool.get(key)!.metrics.dispatchedSinceScrape, 2);
    await pool.stop();
  });

  it("never overlaps scrapes of one endpoint", async () => {
    engine.state.metricsDelayMs = 60;
    engine.maxConcurrentScrapes = 0;
    const before = engine.metricsRequests;
    const pool = poolFor([engine.url], { scrapeIntervalMs: 5, modelsIntervalMs: 0 });
    await pool.start();
    await new Promise((r) => setTimeout(r, 250));
    await pool.stop();
    engine.state.metricsDelayMs = 0;
    assert.equal(engine.maxConcurrentScrapes, 1);
    const scrapes = engine.metricsRequests - before;
    assert.ok(scrapes >= 2 && scrapes <= 6, `${scrapes} scrapes in 250 ms at 60 ms each`);
  });

  it("flips staleness after the threshold on the injected clock", async () => {
    const clock = new ManualClock(0);
    const pool = poolFor([engine.url], { clock, scrapeIntervalMs: 0, stalenessThresholdMs: 2000 });
    await pool.start();
    const key = pool.all()[0]!.metadata.key;
    assert.equal(pool.isStale(key), false);
    clock.advance(2000);
    assert.equal(pool.isStale(key), false);
    clock.advance(1);
    assert.equal(pool.isStale(key), true);
    await pool.refresh();
    assert.equal(pool.isStale(key), false);
    assert.equal(pool.isStale("default/nope:1"), true);
    await pool.stop();
  });
});

describe("EndpointPool health", () => {
  it("probes /health instead of scraping when metricsPath is empty", async (t) => {
    const engine = await new FakeEngine().start();
    engine.state.waiting = 9;
    const pool = poolFor([engine.url], { scrapeIntervalMs: 0, metricsPath: "" });
    t.after(() => Promise.all([pool.stop(), engine.stop()]));
    await pool.start();
    assert.equal(pool.candidates().length, 1);
    assert.deepEqual([engine.healthRequests, engine.metricsRequests], [1, 0]);
    assert.equal(pool.candidates()[0]!.metrics.waitingQueueSize, 0);
  });

  it("takes a dead server out after consecutive failures and brings it back when it recovers", async (t) => {
    const engine = await new FakeEngine().start();
    const healthy = await new FakeEngine().start();
    const pool = poolFor([engine.url, healthy.url], { scrapeIntervalMs: 10, unhealthyAfterFailures: 2 });
    t.after(() => Promise.all([pool.stop(), engine.stop(), healthy.stop()]));
    await pool.start();
    assert.equal(pool.candidates().length, 2);
    const changes: number[] = [];
    pool.on("change", () => changes.push(pool.candidates().length));
    const key = `default/127.0.0.1:${engine.port}`;

    await engine.stop();
    await waitFor(() => pool.get(key)?.status.health === "unhealthy", "endpoint to become unhealthy");
    assert.deepEqual(
      pool.candidates().map((e) => e.metadata.port),
      [healthy.port],
    );
    assert.ok(pool.get(key)!.status.consecutiveFailures >= 2);
    assert.ok(pool.counters().pollErrorsTotal >= 2);

    await engine.start();
    await waitFor(() => pool.candidates().length === 2, "endpoint to come back");
    assert.equal(pool.get(key)!.status.lastError, undefined);
    assert.deepEqual(changes, [1, 2]);
  });

  it("markFailed removes an endpoint at once; only a later successful scrape restores it", async (t) => {
    const engine = await new FakeEngine().start();
    const pool = poolFor([engine.url], { scrapeIntervalMs: 0 });
    t.after(() => Promise.all([pool.stop(), engine.stop()]));
    await pool.start();
    const key = pool.all()[0]!.metadata.key;
    pool.markFailed(key);
    assert.equal(pool.candidates().length, 0);
    assert.equal(pool.get(key)!.status.health, "unhealthy");
    await pool.refresh();
    assert.equal(pool.candidates().length, 1);
  });

  it("markDraining keeps an endpoint out while it answers probes, until it goes away and comes back", async (t) => {
    const engine = await new FakeEngine().start();
    const pool = poolFor([engine.url], { scrapeIntervalMs: 0 });
    t.after(() => Promise.all([pool.stop(), engine.stop()]));
    await pool.start();
    const key = pool.all()[0]!.metadata.key;
    pool.markDraining(key);
    assert.equal(pool.get(key)!.status.health, "draining");
    await pool.refresh();
    assert.equal(pool.get(key)!.status.health, "draining", "a draining server still answers scrapes");
    assert.equal(pool.candidates().length, 0);
    await engine.stop();
    await pool.refresh();
    assert.equal(pool.get(key)!.status.health, "unhealthy", "it exited");
    await engine.start();
    await pool.refresh();
    assert.equal(pool.get(key)!.status.health, "ready", "the restarted server is a candidate again");
    assert.equal(pool.candidates().length, 1);
  });

  it("keeps a never-reachable endpoint pending and out of the candidates", async () => {
    const engine = await new FakeEngine().start();
    await engine.stop();
    const pool = poolFor([engine.url], { scrapeIntervalMs: 0 });
    await pool.start();
    assert.equal(pool.candidates().length, 0);
    assert.equal(pool.all()[0]!.status.health, "pending");
    assert.match(pool.all()[0]!.status.lastError ?? "", /ECONNREFUSED/);
    await pool.stop();
  });
});
