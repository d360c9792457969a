import assert from "node:assert/strict";
import { test } from "node:test";
import { itemsToMessages, outputMessage, type ResponseItem } from "../api/responses.ts";
import { ChainCache, EMPTY_CHAIN, extendChain, sameIds } from "./chain-cache.ts";

const user = (text: string): ResponseItem => ({ type: "message", role: "user", content: text });

test("an extended chain's JSON equals serialising the whole history", () => {
  const first = [user('a "quoted" line\\n'), outputMessage("m1", "answer")];
  const second: ResponseItem[] = [{ type: "function_call_output", call_id: "c", output: "42" }];
  const chain = extendChain(extendChain(EMPTY_CHAIN, ["i1", "i2"], first), ["i3"], second);
  const all = [...first, ...second];
  assert.deepEqual(JSON.parse(`[${chain.itemsJson}]`), all);
  assert.deepEqual(JSON.parse(`[${chain.messagesJson}]`), itemsToMessages(null, all));
  assert.deepEqual(chain.itemIds, ["i1", "i2", "i3"]);
  assert.ok(sameIds(chain.itemIds, ["i1", "i2", "i3"]) && !sameIds(chain.itemIds, ["i1", "i3"]));
});

test("the cache holds at most maxBytes, dropping the least recently used chain", () => {
  const chain = (n: number) => extendChain(EMPTY_CHAIN, [`i${n}`], [user("x".repeat(100))]);
  const one = chain(1).bytes;
  const cache = new ChainCache(one * 2);
  cache.set("a", chain(1));
  cache.set("b", chain(2));
  cache.get("a");
  cache.set("c", chain(3));
  assert.ok(cache.get("a") && cache.get("c"));
  assert.equal(cache.get("b"), undefined);
  assert.equal(cache.size, 2 * one);
  cache.delete("a");
  assert.equal(cache.size, one);
  cache.set("huge", extendChain(EMPTY_CHAIN, ["h"], [user("y".repeat(1000))]));
  assert.equal(cache.get("huge"), undefined, "a chain larger than the budget is not kept");
});
