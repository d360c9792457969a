import assert from "node:assert/strict";
import { test } from "node:test";
import { rewriteJsonBody, SseUsageRewriter } from "./usage-rewrite.ts";

const usage = (cached: number) => ({
  prompt_tokens: 40,
  completion_tokens: 2,
  prompt_tokens_details: { cached_tokens: cached },
});

test("a JSON answer gets the prefill's cached_tokens; one without usage is left as it is", () => {
  const body = Buffer.from(JSON.stringify({ id: "x", usage: usage(0) }));
  assert.deepEqual(JSON.parse(rewriteJsonBody(body, 32).toString()), { id: "x", usage: usage(32) });
  const none = Buffer.from('{"id":"x"}');
  assert.equal(rewriteJsonBody(none, 32), none);
});

test("a stream: only the usage event changes, even when chunks cut events anywhere", () => {
  const events = [
    `data: ${JSON.stringify({ choices: [{ delta: { content: "a" } }], usage: null })}\n\n`,
    `data: ${JSON.stringify({ choices: [], usage: usage(0) })}\n\n`,
    "data: [DONE]\n\n",
  ];
  const text = events.join("");
  const expected = `${events[0]}data: ${JSON.stringify({ choices: [], usage: usage(16) })}\n\n${events[2]}`;
  for (const cut of [1, 7, 50, text.length - 3, text.length]) {
    const rewriter = new SseUsageRewriter(16);
    const out = [
      rewriter.push(Buffer.from(text.slice(0, cut))),
      rewriter.push(Buffer.from(text.slice(cut))),
      rewriter.end(),
    ];
    assert.equal(Buffer.concat(out).toString(), expected, `cut at ${cut}`);
  }
});

test("a complete event passes at once; an event without usage passes byte for byte", () => {
  const rewriter = new SseUsageRewriter(1);
  const chunk = Buffer.from('data: {"choices":[{"delta":{"content":"x"}}]}\n\n');
  assert.deepEqual(rewriter.push(chunk), chunk);
  assert.equal(rewriter.end().length, 0);
});
