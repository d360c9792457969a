/**
 * The Responses API through a real router over simulators on loopback, driven by the official
 * `openai` client: create, chain (with and without streaming), retrieve, list input items, delete;
 * a chained turn sent with only its new input lands on the previous turn's endpoint and reports most
 * of its prompt as cached; chains survive a router restart (SQLite); OpenAI's error semantics; and
 * tenants that cannot see each other's responses.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI, { type APIError } from "openai";
import { TenantMap } from "../../src/flow-control/identity.ts";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, routerFor, startSims } from "./harness.ts";

const dir = mkdtempSync(join(tmpdir(), "llmd-responses-"));
const STORE = join(dir, "responses.sqlite");
const TENANTS = new TenantMap([
  { name: "acme", apiKeys: ["acme-key-0001"] },
  { name: "globex", apiKeys: ["globex-key-0001"] },
]);
/** A long shared context, so the cached share of a chained turn is large. */
const CONTEXT = "You are reviewing a long design document. ".repeat(120);

describe("Responses API through the router", () => {
  let sims: SimServer[];
  let router: Router;
  const start = () =>
    routerFor(
      sims.map((s) => s.url),
      undefined,
      { responses: { store: STORE }, tenants: TENANTS },
    );
  const client = (key = "acme-key-0001") =>
    new OpenAI({ baseURL: `${router.url}/v1`, apiKey: key, maxRetries: 0 });

  before(async () => {
    sims = await startSims(3);
    router = await start();
  });

  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates, chains on the same endpoint with the history cached, and streams a chained turn", async () => {
    const openai = client();
    const first = await openai.responses
      .create({ model: MODEL, input: `${CONTEXT} Summarise it.`, max_output_tokens: 16 })
      .withResponse();
    assert.match(first.data.id, /^resp_/);
    assert.ok(first.data.output_text.length > 0);
    // The simulator echoes the (long) prompt, so 16 tokens cut it: OpenAI's `incomplete`.
    assert.equal(first.data.status, "incomplete");
    assert.equal(first.data.incomplete_details?.reason, "max_output_tokens");
    const endpoint = first.response.headers.get("x-llmd-endpoint");
    const second = await openai.responses
      .create({
        model: MODEL,
        input: "And the risks?",
        previous_response_id: first.data.id,
        max_output_tokens: 16,
      })
      .withResponse();
    assert.equal(second.response.headers.get("x-llmd-endpoint"), endpoint);
    const usage = second.data.usage!;
    assert.ok(usage.input_tokens > first.data.usage!.input_tokens, "the history was sent upstream");
    assert.ok(usage.input_tokens_details.cached_tokens > usage.input_tokens / 2, JSON.stringify(usage));
    const stream = await openai.responses.create({
      model: MODEL,
      input: [{ role: "user", content: [{ type: "input_text", text: "One more point." }] }],
      previous_response_id: second.data.id,
      max_output_tokens: 8,
      stream: true,
    });
    const types: string[] = [];
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    assert.deepEqual(types.slice(0, 4), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    assert.equal(types.at(-1), "response.completed", "a short echo ends before max_output_tokens");
    const part = completed?.output[0]?.type === "message" ? completed.output[0].content[0] : undefined;
    assert.ok(completed && part?.type === "output_text" && part.text === text && text.length > 0);
    assert.ok(completed.usage!.input_tokens_details.cached_tokens > 0);
    const stored = await openai.responses.retrieve(completed.id);
    assert.equal(stored.output_text, text);
    assert.equal(stored.previous_response_id, second.data.id);
  });

  it("lists input items, deletes, and refuses to chain a deleted or unstored response", async () => {
    const openai = client();
    const kept = await openai.responses.create({ model: MODEL, input: "first", max_output_tokens: 4 });
    const items = await openai.responses.inputItems.list(kept.id);
    assert.deepEqual(
      items.data.map((i) => (i.type === "message" ? i.role : i.type)),
      ["user"],
    );
    const unstored = await openai.responses.create({
      model: MODEL,
      input: "x",
      store: false,
      max_output_tokens: 4,
    });
    assert.equal((unstored as unknown as { store: boolean }).store, false);
    await assert.rejects(openai.responses.retrieve(unstored.id), (err: APIError) => err.status === 404);
    const deleted = await openai.responses.create({ model: MODEL, input: "y", max_output_tokens: 4 });
    await openai.responses.delete(deleted.id);
    await assert.rejects(openai.responses.retrieve(deleted.id), (err: APIError) => err.status === 404);
    for (const id of [unstored.id, deleted.id, "resp_nope"]) {
      await assert.rejects(
        openai.responses.create({ model: MODEL, input: "z", previous_response_id: id }),
        (err: APIError) =>
          err.status === 400 &&
          err.code === "previous_response_not_found" &&
          err.param === "previous_response_id",
      );
    }
  });

  it("does not carry instructions over to the next turn", async () => {
    const openai = client();
    const first = await openai.responses.create({
      model: MODEL,
      instructions: CONTEXT,
      input: "hi",
      max_output_tokens: 2,
    });
    const next = await openai.responses.create({
      model: MODEL,
      input: "again",
      previous_response_id: first.id,
      max_output_tokens: 2,
    });
    assert.ok(first.usage!.input_tokens > 200);
    assert.ok(next.usage!.input_tokens < first.usage!.input_tokens / 2, `${next.usage!.input_tokens}`);
    assert.equal(next.instructions, null);
  });

  it("answers malformed input with OpenAI errors naming the parameter", async () => {
    const openai = client();
    const bad: [unknown, string][] = [
      [[{ type: "image_generation_call" }], "input"],
      [[{ role: "wizard", content: "x" }], "input"],
      [[{ type: "function_call", name: "f" }], "input"],
      [5, "input"],
    ];
    for (const [input, param] of bad) {
      await assert.rejects(
        openai.responses.create({ model: MODEL, input: input as string }),
        (err: APIError) => err.status === 400 && err.param === param,
      );
    }
    await assert.rejects(
      openai.responses.create({
        model: MODEL,
        input: "x",
        previous_response_id: "resp_a",
        conversation: "conv_b",
      }),
      (err: APIError) => err.status === 400,
    );
  });

  it("keeps tenants apart: another tenant can neither read, chain nor delete a response", async () => {
    const mine = await client().responses.create({ model: MODEL, input: "secret", max_output_tokens: 4 });
    const other = client("globex-key-0001");
    await assert.rejects(other.responses.retrieve(mine.id), (err: APIError) => err.status === 404);
    await assert.rejects(other.responses.delete(mine.id), (err: APIError) => err.status === 404);
    await assert.rejects(
      other.responses.create({ model: MODEL, input: "x", previous_response_id: mine.id }),
      (err: APIError) => err.status === 400,
    );
    assert.equal((await client().responses.retrieve(mine.id)).id, mine.id);
  });

  it("keeps chains across a router restart (SQLite)", async () => {
    const first = await client().responses.create({
      model: MODEL,
      input: `${CONTEXT} Remember this.`,
      max_output_tokens: 4,
    });
    await router.close();
    router = await start();
    const next = await client().responses.create({
      model: MODEL,
      input: "Continue.",
      previous_response_id: first.id,
      max_output_tokens: 4,
    });
    assert.equal(next.previous_response_id, first.id);
    assert.ok(next.usage!.input_tokens > first.usage!.input_tokens);
    assert.equal((await client().responses.retrieve(first.id)).id, first.id);
  });
});

describe("Responses API through the router to a stateless /v1/responses backend", () => {
  let sims: SimServer[];
  let router: Router;
  const store = join(mkdtempSync(join(tmpdir(), "llmd-responses-backend-")), "r.sqlite");

  before(async () => {
    sims = await startSims(2);
    router = await routerFor(
      sims.map((s) => s.url),
      undefined,
      { responses: { store, backend: "responses" } },
    );
  });

  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  it("rehydrates the chain into the stateless request, streams, and caches the history", async () => {
    const openai = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const first = await openai.responses.create({
      model: MODEL,
      input: `${CONTEXT} Note it.`,
      max_output_tokens: 8,
    });
    const stream = openai.responses.stream({
      model: MODEL,
      input: "Next.",
      previous_response_id: first.id,
      max_output_tokens: 8,
    });
    let deltas = "";
    stream.on("response.output_text.delta", (event) => {
      deltas += event.delta;
    });
    const final = await stream.finalResponse();
    assert.equal(final.output_text, deltas);
    assert.equal(final.previous_response_id, first.id);
    assert.ok(final.usage!.input_tokens > first.usage!.input_tokens);
    assert.ok(final.usage!.input_tokens_details.cached_tokens > final.usage!.input_tokens / 2);
    assert.equal((await openai.responses.retrieve(final.id)).output_text, deltas);
  });
});
