import assert from "node:assert/strict";
import { test } from "node:test";
import { createEngine } from "../engine/index.ts";
import { syntheticTokens } from "../engine/test-prompts.ts";
import type { StepOutput } from "../engine/types.ts";
import { Replica } from "./replica.ts";
import { StagedPrefills } from "./staged-prefill.ts";

/** Steps `replica`'s engine until idle, handing stage outputs to `staged`; the first-token order and outputs of the rest. */
function drive(replica: Replica, staged: StagedPrefills, arrive: () => void): Map<string, StepOutput> {
  const first = new Map<string, StepOutput>();
  let now = 0;
  let arrived = false;
  for (let step = replica.engine.step(now); step; step = replica.engine.step(now)) {
    now += step.durationMs;
    for (const output of step.outputs) {
      if (staged.owns(output.id)) staged.stageOutput(output);
      else if (output.first)
        first.set(output.id, {
          ...output,
          cachedTokens: staged.reportedCached(output.id, output.cachedTokens),
        });
    }
    if (!arrived) {
      arrived = true;
      arrive();
    }
  }
  return first;
}

test("stages run one after another, a request arriving meanwhile runs between them, cached tokens leave the stages out", () => {
  const replica = new Replica(0, createEngine({ kvCacheSize: 8192, blockSize: 16 }), "m");
  const staged = new StagedPrefills({ add: (r, request) => r.engine.add(request, 0), fail: assert.fail });
  const long = syntheticTokens(6000, 1);
  const short = syntheticTokens(64, 2);
  assert.equal(staged.start(replica, { id: "long", promptTokens: long, maxTokens: 1 }, [2048, 4096]), null);
  const first = drive(replica, staged, () =>
    replica.engine.add({ id: "short", promptTokens: short, maxTokens: 1 }, 0),
  );
  assert.deepEqual(
    [...first.keys()],
    ["short", "long"],
    "the short request started before the long one's last stage",
  );
  assert.equal(first.get("long")!.cachedTokens, 0, "what the stages prefilled is not counted as cached");
  assert.equal(
    replica.engine.cachedPrefixTokens({ promptTokens: long }),
    5984,
    "the whole prompt ended cached",
  );
});

test("aborting a staged request removes its stage from the engine", () => {
  const replica = new Replica(0, createEngine({ kvCacheSize: 8192, blockSize: 16 }), "m");
  const staged = new StagedPrefills({ add: (r, request) => r.engine.add(request, 0), fail: assert.fail });
  staged.start(replica, { id: "long", promptTokens: syntheticTokens(6000, 1), maxTokens: 1 }, [2048]);
  assert.equal(staged.abort("long"), true);
  assert.equal(replica.engine.hasWork(), false);
  assert.equal(staged.abort("long"), false, "once aborted it is unknown");
});
