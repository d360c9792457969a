import assert from "node:assert/strict";
import { test } from "node:test";
import { PLANNED_PLUGINS } from "./planned-plugins.ts";
import { createBuiltinRegistry } from "./registry.ts";

test("the table lists only types the registry lacks, each saying it is not built", () => {
  const registry = createBuiltinRegistry();
  for (const [type, missing] of PLANNED_PLUGINS) {
    assert.equal(registry.get(type), undefined, `${type} is registered; drop it from the table`);
    assert.match(missing, /\(not built[:)]/, type);
  }
});
