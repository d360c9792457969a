import assert from "node:assert/strict";
import { test } from "node:test";
import { ROLE_LABEL } from "../../../endpoints/endpoint.ts";
import { makeContext, makeEndpoint, makeEnv, rolesKeptBy } from "../../framework/testing.ts";
import type { Filter } from "../../framework/types.ts";
import { definition } from "./index.ts";

test("encode-filter keeps exactly llm-d's encode-capable roles", () => {
  assert.deepEqual(rolesKeptBy(definition), ["encode", "encode-prefill", "encode-prefill-decode"]);
});

test("encode-decode, which llm-d does not define, is not an encode role", () => {
  const filter = definition.create({}, makeEnv("encode-filter")) as Filter;
  const odd = makeEndpoint("odd", { labels: { [ROLE_LABEL]: "encode-decode" } });
  assert.deepEqual(filter.filter(makeContext(), [odd]), []);
});
