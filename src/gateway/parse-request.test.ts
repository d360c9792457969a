import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LlmdError } from "../api/errors.ts";
import { renderChat } from "../api/prompt.ts";
import type { SchedulingRequest } from "../scheduler/framework/types.ts";
import { parseInferenceRequest } from "./parse-request.ts";

const parse = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  parseInferenceRequest(path, headers, Buffer.from(typeof body === "string" ? body : JSON.stringify(body)));

function ok(value: SchedulingRequest | LlmdError): SchedulingRequest {
  if (value instanceof LlmdError) assert.fail(`unexpected error ${value.message}`);
  return value;
}

describe("parseInferenceRequest", () => {
  it("renders chat messages exactly like the simulator", () => {
    const messages = [
      { role: "system", content: "be brief" },
      { role: "user", content: [{ type: "text", text: "hi" }] },
    ];
    const r = ok(parse("/v1/chat/completions", { model: "m", messages }));
    assert.equal(r.promptText, renderChat(messages));
    assert.equal(r.model, "m");
  });

  it("takes the completions prompt as is, and token prompts as no text", () => {
    assert.equal(ok(parse("/v1/completions", { model: "m", prompt: "abc" })).promptText, "abc");
    assert.equal(ok(parse("/v1/completions", { model: "m", prompt: [1, 2, 3] })).promptText, "");
  });

  it("schedules embeddings without prompt text", () => {
    assert.equal(ok(parse("/v1/embeddings", { model: "m", input: "abc" })).promptText, "");
  });

  it("reads the request id and the model rewrite from headers, and the body size", () => {
    const body = { model: "m", prompt: "x" };
    const r = ok(
      parse("/v1/completions", body, { "x-request-id": "abc", "x-llm-d-model-name-rewrite": "m2" }),
    );
    assert.deepEqual([r.requestId, r.model, r.bodyBytes], ["abc", "m2", JSON.stringify(body).length]);
  });

  it("generates a request id when none is given", () => {
    assert.match(ok(parse("/v1/completions", { model: "m", prompt: "x" })).requestId, /^[0-9a-f-]{36}$/);
  });

  const bad: [string, string, unknown][] = [
    ["malformed JSON", "/v1/completions", "{not json"],
    ["a JSON array", "/v1/completions", "[1,2]"],
    ["missing model", "/v1/completions", { prompt: "x" }],
    ["empty model", "/v1/completions", { model: "", prompt: "x" }],
    ["missing prompt", "/v1/completions", { model: "m" }],
    ["prompt of wrong type", "/v1/completions", { model: "m", prompt: 5 }],
    ["empty messages", "/v1/chat/completions", { model: "m", messages: [] }],
    ["message without role", "/v1/chat/completions", { model: "m", messages: [{ content: "x" }] }],
  ];
  const chat = (extra: Record<string, unknown>) => ({
    model: "m",
    messages: [{ role: "user", content: "x" }],
    ...extra,
  });
  const badParams: [string, string, unknown, string][] = [
    ["a string temperature", "/v1/chat/completions", chat({ temperature: "hot" }), "temperature"],
    ["a negative temperature", "/v1/chat/completions", chat({ temperature: -1 }), "temperature"],
    ["top_p over 1", "/v1/completions", { model: "m", prompt: "x", top_p: 2 }, "top_p"],
    ["n of 0", "/v1/chat/completions", chat({ n: 0 }), "n"],
    ["negative max_tokens", "/v1/completions", { model: "m", prompt: "x", max_tokens: -5 }, "max_tokens"],
    ["an unknown role", "/v1/chat/completions", chat({ messages: [{ role: "wizard" }] }), "messages[0].role"],
  ];
  for (const [name, path, body, param] of badParams) {
    it(`rejects ${name} with 400 naming ${param}`, () => {
      const r = parse(path, body);
      assert.ok(r instanceof LlmdError, "expected an error value");
      assert.deepEqual([r.status, r.param], [400, param]);
    });
  }

  it("leaves to the model server what vLLM accepts (n > 1, unknown fields)", () => {
    ok(parse("/v1/chat/completions", chat({ n: 4, temperature: 3, vendor_field: { a: 1 } })));
  });
  for (const [name, path, body] of bad) {
    it(`rejects ${name} with 400`, () => {
      const r = parse(path, body);
      assert.ok(r instanceof LlmdError, "expected an error value");
      assert.equal(r.status, 400);
    });
  }
});
