import assert from "node:assert/strict";
import { test } from "node:test";
import { rolesKeptBy } from "../../framework/testing.ts";
import { definition } from "./index.ts";

test("prefill-filter keeps exactly llm-d's prefill-capable roles", () => {
  assert.deepEqual(rolesKeptBy(definition), [
    "prefill",
    "encode-prefill",
    "prefill-decode",
    "encode-prefill-decode",
    "both",
  ]);
});
