import assert from "node:assert/strict";
import { test } from "node:test";
import { PodResolver } from "./pod-resolver.ts";

test("a batch resolves to the endpoint its topic names, and each data-parallel rank to its own", () => {
  const resolver = new PodResolver([
    { key: "default/a", address: "10.0.0.1", port: 8000 },
    { key: "default/dp-rank-0", address: "10.0.0.2", port: 8000, dpRank: 0 },
    { key: "default/dp-rank-1", address: "10.0.0.2", port: 8001, dpRank: 1 },
  ]);
  assert.equal(resolver.resolve("10.0.0.1:8000", null, 0), "default/a");
  assert.equal(resolver.resolve("10.0.0.2:8000", null, 0), "default/dp-rank-0");
  assert.equal(
    resolver.resolve("10.0.0.2:8000", null, 1),
    "default/dp-rank-1",
    "rank 1 under rank 0's topic",
  );
  assert.equal(resolver.resolve("custom-topic", "10.0.0.1", 0), "default/a", "the subscription's host");
  assert.equal(resolver.resolve("10.0.0.9:8000", null, 0), undefined);
  assert.equal(resolver.resolve("10.0.0.1:8000", null, 3), undefined, "no such rank");
});
