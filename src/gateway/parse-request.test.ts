import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LlmdError } from "../api/errors.ts";
import { renderChat } from "../api/prompt.ts";
import type { SchedulingRequest } from "../scheduler/framework/types.ts";
import { DEFAULT_FLOW, parseInferenceRequest, resolveFairnessId } from "./parse-request.ts";

const objectives = new Map([["premium", 100]]);
const parse = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  parseInferenceRequest(
    path,
    headers,
    Buffer.from(typeof body === "string" ? body : JSON.stringify(body)),
    objectives,
  );

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

  it("reads id, objective priority, fairness and model rewrite from headers", () => {
    const r = ok(
      parse(
        "/v1/completions",
        { model: "m", prompt: "x" },
        {
          "x-request-id": "abc",
          "x-llm-d-inference-objective": "premium",
          "x-llm-d-inference-fairness-id": "tenant-a",
          "x-llm-d-model-name-rewrite": "m2",
        },
      ),
    );
    assert.deepEqual([r.requestId, r.priority, r.fairnessId, r.model], ["abc", 100, "tenant-a", "m2"]);
  });

  it("generates a request id, priority 0 for unknown objectives", () => {
    const r = ok(
      parse("/v1/completions", { model: "m", prompt: "x" }, { "x-llm-d-inference-objective": "nope" }),
    );
    assert.match(r.requestId, /^[0-9a-f-]{36}$/);
    assert.equal(r.priority, 0);
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
  for (const [name, path, body] of bad) {
    it(`rejects ${name} with 400`, () => {
      const r = parse(path, body);
      assert.ok(r instanceof LlmdError, "expected an error value");
      assert.equal(r.status, 400);
    });
  }
});

describe("resolveFairnessId", () => {
  it("prefers the header, then the agent identity, then default-flow", () => {
    const withAgent = ok(parse("/v1/completions", { model: "m", prompt: "x" }));
    withAgent.attributes.set("agent-identity", "agent-7");
    resolveFairnessId(withAgent);
    assert.equal(withAgent.fairnessId, "agent-7");
    const plain = ok(parse("/v1/completions", { model: "m", prompt: "x" }));
    resolveFairnessId(plain);
    assert.equal(plain.fairnessId, DEFAULT_FLOW);
    const header = ok(
      parse("/v1/completions", { model: "m", prompt: "x" }, { "x-llm-d-inference-fairness-id": "t" }),
    );
    header.attributes.set("agent-identity", "agent-7");
    resolveFairnessId(header);
    assert.equal(header.fairnessId, "t");
  });
});
