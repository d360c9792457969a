import assert from "node:assert/strict";
import { test } from "node:test";
import { ROLE_LABEL } from "../../../endpoints/endpoint.ts";
import { makeContext, makeEndpoint, makeEnv, rolesKeptBy } from "../../framework/testing.ts";
import type { Filter } from "../../framework/types.ts";
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

test("a role value llm-d does not define (encode-decode) is dropped, unlike a missing label", () => {
  const filter = definition.create({}, makeEnv("decode-filter")) as Filter;
  const endpoints = [
    makeEndpoint("odd", { labels: { [ROLE_LABEL]: "encode-decode" } }),
    makeEndpoint("unlabeled"),
  ];
  assert.deepEqual(
    filter.filter(makeContext(), endpoints).map((e) => e.metadata.name),
    ["unlabeled"],
  );
});
