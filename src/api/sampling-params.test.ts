import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkMessages, checkSamplingParams, type GenerationKind } from "./sampling-params.ts";

const user = [{ role: "user", content: "hi" }];

describe("checkSamplingParams", () => {
  const good: [GenerationKind, Record<string, unknown>][] = [
    ["chat", {}],
    ["chat", { temperature: 0, top_p: 1, top_k: -1, min_p: 0, n: 3, seed: -7, stop: ["a", "b"] }],
    ["chat", { temperature: 1.7, presence_penalty: -2, frequency_penalty: 2, repetition_penalty: 1.1 }],
    ["chat", { top_k: 0, max_tokens: 1, max_completion_tokens: 9, min_tokens: 0 }],
    ["chat", { logprobs: true, top_logprobs: 20, response_format: { type: "json_object" } }],
    ["chat", { response_format: { type: "json_schema", json_schema: { name: "x", schema: {} } } }],
    ["chat", { stream: true, stream_options: { include_usage: true, continuous_usage_stats: false } }],
    ["chat", { temperature: null, top_p: null, stop: null, stream_options: null, unknown_field: "kept" }],
    ["completion", { logprobs: 5, echo: true, stop: "x", max_tokens: 16 }],
  ];
  for (const [kind, body] of good) {
    it(`accepts ${kind} ${JSON.stringify(body)}`, () => {
      assert.equal(checkSamplingParams(body, kind), undefined);
    });
  }

  const bad: [GenerationKind, Record<string, unknown>, string][] = [
    ["chat", { temperature: "hot" }, "temperature"],
    ["chat", { temperature: -1 }, "temperature"],
    ["chat", { temperature: Number.NaN }, "temperature"],
    ["chat", { top_p: 2 }, "top_p"],
    ["chat", { top_p: 0 }, "top_p"],
    ["chat", { top_k: -2 }, "top_k"],
    ["chat", { top_k: 1.5 }, "top_k"],
    ["chat", { min_p: 1.1 }, "min_p"],
    ["chat", { presence_penalty: 3 }, "presence_penalty"],
    ["chat", { frequency_penalty: -2.5 }, "frequency_penalty"],
    ["chat", { repetition_penalty: 0 }, "repetition_penalty"],
    ["chat", { n: 0 }, "n"],
    ["chat", { n: "2" }, "n"],
    ["chat", { max_tokens: -5 }, "max_tokens"],
    ["chat", { max_completion_tokens: 0 }, "max_completion_tokens"],
    ["chat", { min_tokens: -1 }, "min_tokens"],
    ["chat", { stop: 5 }, "stop"],
    ["chat", { stop: ["a", 1] }, "stop"],
    ["chat", { seed: 1.5 }, "seed"],
    ["chat", { seed: 2 ** 64 }, "seed"],
    ["chat", { logprobs: 3 }, "logprobs"],
    ["chat", { logprobs: true, top_logprobs: 21 }, "top_logprobs"],
    ["chat", { top_logprobs: 2 }, "top_logprobs"],
    ["chat", { response_format: "json" }, "response_format"],
    ["chat", { response_format: { type: "yaml" } }, "response_format"],
    ["chat", { response_format: { type: "json_schema" } }, "response_format"],
    ["chat", { stream: "yes" }, "stream"],
    ["chat", { stream_options: { include_usage: true } }, "stream_options"],
    ["chat", { stream: true, stream_options: { include_usage: "yes" } }, "stream_options"],
    ["completion", { logprobs: true }, "logprobs"],
    ["completion", { logprobs: 21 }, "logprobs"],
    ["completion", { echo: 1 }, "echo"],
  ];
  for (const [kind, body, param] of bad) {
    it(`rejects ${kind} ${JSON.stringify(body)} naming ${param}`, () => {
      const error = checkSamplingParams(body, kind);
      assert.ok(error, "expected an error");
      assert.deepEqual([error.status, error.code, error.param], [400, "invalid_request", param]);
    });
  }
});

describe("checkMessages", () => {
  it("accepts every role, null content and known part types", () => {
    const messages = [
      { role: "system", content: "s" },
      { role: "developer", content: "d" },
      {
        role: "user",
        content: [
          { type: "text", text: "t" },
          { type: "image_url", image_url: { url: "u" } },
        ],
      },
      { role: "assistant", content: null, tool_calls: [] },
      { role: "tool", content: "r", tool_call_id: "1" },
    ];
    assert.equal(checkMessages(messages), undefined);
    assert.equal(checkMessages(user), undefined);
  });

  const bad: [unknown, string][] = [
    [[], "messages"],
    ["hi", "messages"],
    [[null], "messages[0]"],
    [[{ role: "wizard", content: "x" }], "messages[0].role"],
    [[{ content: "x" }], "messages[0].role"],
    [[...user, { role: "user", content: 5 }], "messages[1].content"],
    [[{ role: "user", content: ["x"] }], "messages[0].content[0]"],
    [[{ role: "user", content: [{ type: "hologram" }] }], "messages[0].content[0].type"],
    [[{ role: "user", content: [{ type: "text", text: 3 }] }], "messages[0].content[0].text"],
  ];
  for (const [messages, param] of bad) {
    it(`rejects ${JSON.stringify(messages)} naming ${param}`, () => {
      const error = checkMessages(messages);
      assert.ok(error, "expected an error");
      assert.deepEqual([error.status, error.param], [400, param]);
    });
  }
});
