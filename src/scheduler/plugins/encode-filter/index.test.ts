import assert from "node:assert/strict";
import { test } from "node:test";
import { rolesKeptBy } from "../../framework/testing.ts";
import { definition } from "./index.ts";

test("encode-filter keeps exactly llm-d's encode-capable roles", () => {
  assert.deepEqual(rolesKeptBy(definition), ["encode", "encode-prefill", "encode-prefill-decode"]);
});
