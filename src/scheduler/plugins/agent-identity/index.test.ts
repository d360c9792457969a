import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext } from "../../framework/testing.ts";
import type { RequestHeaderProcessor } from "../../framework/types.ts";
import { instantiate } from "../testing.ts";
import { AGENT_IDENTITY_ATTRIBUTE as AGENT_IDENTITY } from "../../framework/data-keys.ts";
import { definition } from "./index.ts";

function identity(headers: Record<string, string>, params = {}) {
  const ctx = makeContext({ headers });
  instantiate<RequestHeaderProcessor>(definition, params).processRequestHeaders(ctx);
  return ctx.request.attributes.get(AGENT_IDENTITY);
}

test("Claude Code, OpenCode and Codex headers, first match wins", () => {
  assert.equal(identity({ "x-claude-code-session-id": "cc-1", session_id: "codex" }), "cc-1");
  assert.equal(identity({ "x-session-affinity": "oc-1" }), "oc-1");
  assert.equal(identity({ "session-id": "cx-1" }), "cx-1");
  assert.equal(identity({ session_id: "cx-2" }), "cx-2");
  assert.equal(identity({ "x-other": "n" }), undefined);
});

test("additionalSessionHeaders are consulted after the built-ins", () => {
  assert.equal(identity({ "x-my-agent": "m-1" }, { additionalSessionHeaders: ["X-My-Agent"] }), "m-1");
  assert.equal(
    identity({ "x-my-agent": "m-1", "session-id": "c" }, { additionalSessionHeaders: ["x-my-agent"] }),
    "c",
  );
  assert.equal(definition.stability, "alpha");
});
