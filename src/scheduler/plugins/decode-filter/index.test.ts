import assert from "node:assert/strict";
import { test } from "node:test";
import { ROLE_LABEL } from "../../../endpoints/endpoint.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Filter } from "../../framework/types.ts";
import { definition } from "./index.ts";

const EXPECTED = ["decode", "prefill-decode", "encode-prefill-decode", "both", "unlabeled"];
const ROLES = [
  "encode",
  "prefill",
  "decode",
  "encode-prefill",
  "prefill-decode",
  "encode-prefill-decode",
  "both",
];

test("decode-filter keeps exactly llm-d's decode-capable roles", () => {
  const filter = definition.create({}, makeEnv("decode-filter")) as Filter;
  const endpoints = [
    ...ROLES.map((role) => makeEndpoint(role, { labels: { [ROLE_LABEL]: role } })),
    makeEndpoint("unlabeled"),
  ];
  const kept = filter.filter(makeContext(), endpoints).map((e) => e.metadata.name);
  assert.deepEqual(kept, EXPECTED);
});
