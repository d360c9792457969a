import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LlmdError } from "../api/errors.ts";
import { renderChat } from "../api/prompt.ts";
import { hashTextBlocks, prefixSeed } from "../kv-index/index.ts";
import { promptBlockHashes, promptTokenCount } from "../scheduler/plugins/shared/prompt-pieces.ts";
import { defaultTokenizer } from "../tokenizer/tokenizer.ts";
import type { SchedulingRequest } from "../scheduler/framework/types.ts";
import { parseInferenceRequest } from "./parse-request.ts";

const parse = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  parseInferenceRequest(path, headers, Buffer.from(typeof body === "string" ? body : JSON.stringify(body)));

/** Long strings of `value` held as plain data properties (read), without reading any getter. */
function decodedLongStrings(value: unknown): number {
  if (!value || typeof value !== "object") return 0;
  let count = 0;
  for (const descriptor of Object.values(Object.getOwnPropertyDescriptors(value))) {
    if (!("value" in descriptor)) continue;
    const item: unknown = descriptor.value;
    count += typeof item === "string" ? Number(item.length >= 4096) : decodedLongStrings(item);
  }
  return count;
}

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

  it("takes the completions prompt as is, a token-id prompt as its ids, and a batch of id prompts as neither", () => {
    const text = ok(parse("/v1/completions", { model: "m", prompt: "abc" }));
    assert.deepEqual([text.promptText, text.tokens, text.inputTokens], ["abc", undefined, undefined]);
    const ids = ok(parse("/v1/completions", { model: "m", prompt: [128000, 9906, 0, 4294967295] }));
    assert.deepEqual([ids.promptText, ids.inputTokens], ["", 4]);
    assert.deepEqual(ids.tokens, Uint32Array.from([128000, 9906, 0, 4294967295]));
    const batch = ok(parse("/v1/completions", { model: "m", prompt: [[1, 2], [3]] }));
    assert.deepEqual([batch.promptText, batch.tokens], ["", undefined]);
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
    ["a negative token id", "/v1/completions", { model: "m", prompt: [1, -2] }, "prompt"],
    ["a fractional token id", "/v1/completions", { model: "m", prompt: [1, 2.5] }, "prompt"],
    ["a token id of 2^32", "/v1/completions", { model: "m", prompt: [4294967296] }, "prompt"],
    ["a string among token ids", "/v1/completions", { model: "m", prompt: [1, "a"] }, "prompt"],
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

  describe("a large body", () => {
    const long = (seed: number) => `turn ${seed}: ${"lorem ipsum dolor sit amet, ".repeat(2400)}`;
    const messages = [
      { role: "system", content: long(0) },
      {
        role: "user",
        content: [{ type: "text", text: long(1) }, { type: "image_url" }, { type: "text", text: "b" }],
      },
      { role: "assistant", content: `é ${long(2)}` }, // not ASCII: decoded, not hashed from bytes
      { role: "user", content: long(3) },
    ];
    const cases: [string, string, Record<string, unknown>, string][] = [
      ["completion", "/v1/completions", { model: "m", prompt: long(9), max_tokens: 1 }, long(9)],
      [
        "completion list",
        "/v1/completions",
        { model: "m", prompt: [long(1), "x", long(2)] },
        `${long(1)}x${long(2)}`,
      ],
      ["chat", "/v1/chat/completions", { model: "m", messages, cache_salt: "s" }, renderChat(messages)],
    ];
    for (const [name, path, body, text] of cases) {
      it(`${name}: the same prompt text, block keys and token count as the text itself, nothing decoded`, () => {
        const r = ok(parse(path, body));
        assert.ok(
          r.promptParts?.some((p) => p instanceof Uint8Array),
          "hashed from the body's bytes",
        );
        const seed = prefixSeed("m", typeof body.cache_salt === "string" ? body.cache_salt : "");
        const lazyText = Object.getOwnPropertyDescriptor(r, "promptText")!;
        Object.defineProperty(r, "promptText", {
          get: () => assert.fail("routing must not build promptText"),
          configurable: true,
        });
        assert.deepEqual(promptBlockHashes(r, 16, 100_000), hashTextBlocks(text, 16, 100_000, seed));
        assert.equal(promptTokenCount(r, defaultTokenizer), defaultTokenizer.count(text));
        Object.defineProperty(r, "promptText", lazyText);
        assert.equal(decodedLongStrings(r.body), 0, "routing read no long string: all still behind getters");
        assert.equal(r.promptText, text);
        assert.deepEqual(r.body, body);
      });
    }

    it("words a bad parameter's error with its real value, not a placeholder", () => {
      const stop = long(5);
      const big = parse("/v1/completions", { model: "m", prompt: long(4), temperature: stop });
      const small = parse("/v1/completions", { model: "m", prompt: "x", temperature: stop.slice(0, 100) });
      assert.ok(big instanceof LlmdError && small instanceof LlmdError);
      assert.equal(big.message, small.message);
      const model = `m${long(6)}`;
      assert.equal(ok(parse("/v1/completions", { model, prompt: long(7) })).model, model);
    });
  });
});
