import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import { encodeSessionToken } from "../shared/session-affinity.ts";
import { instantiate, resultFor } from "../testing.ts";
import { definition, type SessionAffinityFilter } from "./index.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));
const rank1 = makeEndpoint("pod-rank-1", { dpRank: 1 });
const names = (list: readonly { metadata: { key: string } }[]) => list.map((e) => e.metadata.key);

test("hard pin to the token's endpoint; never empty", () => {
  const filter = instantiate<SessionAffinityFilter>(definition);
  const pinned = makeContext({ headers: { "x-session-token": encodeSessionToken(endpoints[2]!) } });
  assert.deepEqual(names(filter.filter(pinned, endpoints)), ["default/c"]);
  assert.deepEqual(names(filter.filter(pinned, endpoints.slice(0, 2))), ["default/a", "default/b"]);
  assert.deepEqual(names(filter.filter(makeContext(), endpoints)), ["default/a", "default/b", "default/c"]);
  assert.deepEqual(
    names(filter.filter(makeContext({ headers: { "x-session-token": "%%%" } }), endpoints)).length,
    3,
  );
});

test("llm-d tokens (namespace/name) still pin; rank keys pin their rank", () => {
  const filter = instantiate<SessionAffinityFilter>(definition);
  const legacy = makeContext({ headers: { "x-session-token": Buffer.from("default/b").toString("base64") } });
  assert.deepEqual(names(filter.filter(legacy, endpoints)), ["default/b"]);
  const ranked = makeContext({ headers: { "x-session-token": encodeSessionToken(rank1) } });
  assert.deepEqual(names(filter.filter(ranked, [...endpoints, rank1])), [rank1.metadata.key]);
});

test("session_id strategy binds on the first pick and pins after", () => {
  const filter = instantiate<SessionAffinityFilter>(definition, { strategy: "session_id" });
  const first = makeContext({ headers: { "x-session-id": "abc" } });
  assert.equal(filter.filter(first, endpoints).length, 3);
  filter.preRequest(first, resultFor(endpoints[1]!));
  assert.deepEqual(names(filter.filter(makeContext({ headers: { "x-session-id": "abc" } }), endpoints)), [
    "default/b",
  ]);
});
