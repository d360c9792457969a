import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { definition } from "./index.ts";

const make = (params: unknown) =>
  definition.create(definition.parameters.parse(params), makeEnv("s")) as Scorer;

function endpointsWith(values: (number | undefined)[], key = "dcgm-extractor/GPUUtilization") {
  return values.map((v, i) => {
    const e = makeEndpoint(`e${i}`);
    if (v !== undefined) e.attributes.set(key, v);
    return e;
  });
}
const scores = (params: unknown, values: (number | undefined)[], key?: string) =>
  Array.from(make(params).score(makeContext(), endpointsWith(values, key)));
const gpu = { attributeKey: "GPUUtilization", producer: "dcgm-extractor" };
const fixed = { fixedRange: { min: 0, max: 1 } };

test("fixed range, lower is better (llm-d's shipped GPU config); clamped; missing scores 0", () => {
  const algorithm = { type: "linear_lower_is_better", normalization: fixed };
  assert.deepEqual(scores({ ...gpu, algorithm }, [0, 0.25, 1, 1.5, undefined]), [1, 0.75, 0, 0, 0]);
  const higher = { type: "linear_higher_is_better", normalization: fixed };
  assert.deepEqual(scores({ ...gpu, algorithm: higher }, [0, 0.25, -1, undefined]), [0, 0.25, 0, 0]);
});

test("adaptive range (the default) over the candidates that have the attribute", () => {
  const lower = { type: "linear_lower_is_better" };
  assert.deepEqual(scores({ ...gpu, algorithm: lower }, [2, 4, 6, undefined]), [1, 0.5, 0, 0]);
  const higher = { type: "linear_higher_is_better", normalization: { adaptiveRange: {} } };
  assert.deepEqual(scores({ ...gpu, algorithm: higher }, [2, 4, 6]), [0, 0.5, 1]);
  assert.deepEqual(
    scores({ ...gpu, algorithm: lower }, [3, 3, undefined]),
    [1, 1, 0],
    "all equal: neutral 1",
  );
});

test("without a producer it reads a core-metrics-extractor custom metric", () => {
  const algorithm = { type: "linear_lower_is_better" };
  assert.deepEqual(scores({ attributeKey: "custom.depth", algorithm }, [0, 10], "custom.depth"), [1, 0]);
});

test("parameters: llm-d's names and rules", () => {
  const ok = (params: unknown) => definition.parameters.safeParse(params).success;
  assert.ok(ok({ attributeKey: "x", algorithm: { type: "linear_higher_is_better" } }));
  assert.ok(!ok({ attributeKey: "x" }), "algorithm is required");
  assert.ok(!ok({ attributeKey: "x", algorithm: { type: "quadratic" } }));
  assert.ok(
    !ok({
      attributeKey: "x",
      algorithm: { type: "linear_higher_is_better", normalization: { fixedRange: { min: 1, max: 1 } } },
    }),
  );
  assert.ok(
    !ok({
      attributeKey: "x",
      algorithm: { type: "linear_higher_is_better", normalization: { ...fixed, adaptiveRange: {} } },
    }),
    "at most one strategy",
  );
});
