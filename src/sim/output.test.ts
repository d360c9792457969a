import assert from "node:assert/strict";
import { test } from "node:test";
import type { GenerationRequest } from "../api/openai.ts";
import { CharChunkTokenizer } from "../tokenizer/tokenizer.ts";
import { OutputPlanner, type PlannedOutput, tokensText } from "./output.ts";

const char4 = new CharChunkTokenizer();
/** The planned output without its token ends. */
const plain = ({ ends: _, ...rest }: PlannedOutput) => rest;

const request = (over: Partial<GenerationRequest>): GenerationRequest => ({
  kind: "completion",
  model: "m",
  prompt: { text: "p" },
  echoText: "abcdefghij",
  stream: false,
  includeUsage: false,
  maxTokens: undefined,
  ignoreEos: false,
  stop: [],
  cacheSalt: undefined,
  ...over,
});

test("echo: cut to max_tokens, repeated under ignore_eos, cut by stop strings", () => {
  const echo = new OutputPlanner("echo", 1, 100, char4);
  assert.deepEqual(plain(echo.plan(request({}), 1)), { tokens: 3, text: "abcdefghij", finishReason: "stop" });
  assert.deepEqual(plain(echo.plan(request({ maxTokens: 2 }), 1)), {
    tokens: 2,
    text: "abcdefgh",
    finishReason: "length",
  });
  const repeated = echo.plan(request({ maxTokens: 4, ignoreEos: true }), 1);
  assert.equal(repeated.text, "abcdefghijabcdef");
  assert.equal(tokensText(repeated, 2, 4), "ijabcdef");
  const stopped = echo.plan(request({ stop: ["ef", "zz"] }), 1);
  assert.deepEqual(plain(stopped), { tokens: 2, text: "abcd", finishReason: "stop" });
  assert.equal(tokensText(stopped, 0, 1), "abcd");
  assert.equal(tokensText(stopped, 1, 2), "");
});

test("default limits: 16 for completions, the remaining context for chat", () => {
  const planner = new OutputPlanner("random", 1, 100, char4);
  assert.equal(planner.limit(request({}), 10), 16);
  assert.equal(planner.limit(request({}), 90), 10);
  assert.equal(planner.limit(request({ kind: "chat" }), 10), 90);
});

test("random mode is deterministic per seed and bounded by the limit", () => {
  const lengths = (seed: number) => {
    const planner = new OutputPlanner("random", seed, 1000, char4);
    return Array.from({ length: 50 }, () => planner.plan(request({ maxTokens: 40 }), 1));
  };
  const a = lengths(5);
  assert.deepEqual(a, lengths(5));
  for (const out of a) {
    assert.ok(out.tokens >= 1 && out.tokens <= 40);
    assert.equal(out.text.length, out.tokens * 4);
    assert.equal(out.finishReason, out.tokens === 40 ? "length" : "stop");
  }
  assert.ok(a.some((o) => o.tokens === 40) && a.some((o) => o.tokens < 40));
});
