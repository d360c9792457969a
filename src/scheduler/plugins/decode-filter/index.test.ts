import assert from "node:assert/strict";
import { test } from "node:test";
import { rolesKeptBy } from "../../framework/testing.ts";
import { definition } from "./index.ts";

test("decode-filter keeps exactly llm-d's decode-capable roles", () => {
  assert.deepEqual(rolesKeptBy(definition), [
    "decode",
    "prefill-decode",
    "encode-prefill-decode",
    "both",
    "unlabeled",
  ]);
});
