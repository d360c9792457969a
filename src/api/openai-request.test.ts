import assert from "node:assert/strict";
import { test } from "node:test";
import { parseChatRequest, parseCompletionRequest, parseJsonBody } from "./openai-request.ts";

test("completions accept a string, a one-string list and token ids", () => {
  const text = parseCompletionRequest({ model: "m", prompt: ["hi"], stop: "x", stream: true });
  assert.ok(text.ok);
  assert.deepEqual(text.value.prompt, { text: "hi" });
  assert.deepEqual(text.value.stop, ["x"]);
  const ids = parseCompletionRequest({ model: "m", prompt: [[3, 4]] });
  assert.ok(ids.ok);
  assert.deepEqual(ids.value.prompt, { tokenIds: new Uint32Array([3, 4]) });
  for (const prompt of ["", [], ["a", "b"], [1, -2], [1.5], { text: "x" }]) {
    const bad = parseCompletionRequest({ model: "m", prompt });
    assert.ok(!bad.ok && bad.error.param === "prompt", JSON.stringify(prompt));
  }
});

test("chat: max_completion_tokens wins over max_tokens; echo text is the last user message", () => {
  const messages = [
    { role: "user", content: "first" },
    { role: "assistant", content: "ok" },
    { role: "user", content: [{ type: "text", text: "second" }] },
  ];
  const parsed = parseChatRequest({ model: "m", messages, max_tokens: 5, max_completion_tokens: 7 });
  assert.ok(parsed.ok);
  assert.equal(parsed.value.maxTokens, 7);
  assert.equal(parsed.value.echoText, "second");
  assert.ok("text" in parsed.value.prompt && parsed.value.prompt.text.endsWith("<|assistant|>\n"));
});

test("JSON bodies must be objects", () => {
  assert.ok(parseJsonBody('{"a":1}').ok);
  for (const text of ["", "[]", "null", "1", "{"]) assert.ok(!parseJsonBody(text).ok, text);
});
