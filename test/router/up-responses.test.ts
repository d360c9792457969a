/**
 * The Responses API through `llmd up` as a user runs it, with the official `openai` client: a
 * conversation chained by `previous_response_id` lands on the previous turn's replica with its
 * history cached, continues after `llmd up` restarts on the same SQLite store, streams a chained
 * turn, and its responses are retrieved, listed and deleted.
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import OpenAI from "openai";
import { spawnUp, stopChild } from "./harness.ts";

const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
const dir = mkdtempSync(join(tmpdir(), "llmd-up-responses-"));
const running: ChildProcess[] = [];

after(() => {
  for (const child of running) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** `llmd up` with two replicas on the test's store. */
async function up(): Promise<{ child: ChildProcess; url: string }> {
  const stack = await spawnUp([
    "--replicas",
    "2",
    "--speed",
    "50",
    "--responses-store",
    join(dir, "r.sqlite"),
  ]);
  running.push(stack.child);
  return stack;
}

test("a chained conversation through llmd up: same replica, history cached, kept across a restart", async () => {
  const context = "Here is the repository layout we discussed at length. ".repeat(60);
  let stack = await up();
  let client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const first = await client.responses
    .create({ model: MODEL, input: `${context} Which module routes requests?`, max_output_tokens: 8 })
    .withResponse();
  const second = await client.responses
    .create({
      model: MODEL,
      input: "And which one stores them?",
      previous_response_id: first.data.id,
      max_output_tokens: 8,
    })
    .withResponse();
  assert.equal(second.response.headers.get("x-llmd-endpoint"), first.response.headers.get("x-llmd-endpoint"));
  const usage = second.data.usage!;
  assert.ok(usage.input_tokens_details.cached_tokens > usage.input_tokens / 2, JSON.stringify(usage));
  await stopChild(stack.child);
  stack = await up();
  client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const third = await client.responses.create({
    model: MODEL,
    input: "Summarise both.",
    previous_response_id: second.data.id,
    max_output_tokens: 8,
  });
  assert.equal(third.previous_response_id, second.data.id);
  assert.ok(third.usage!.input_tokens > usage.input_tokens, "the restarted router rehydrated the chain");
  const items = await client.responses.inputItems.list(third.id);
  assert.equal(items.data.length, 1);
  const stream = client.responses.stream({
    model: MODEL,
    input: "Once more, streamed.",
    previous_response_id: third.id,
    max_output_tokens: 8,
  });
  let deltas = "";
  stream.on("response.output_text.delta", (event) => {
    deltas += event.delta;
  });
  const fourth = await stream.finalResponse();
  assert.ok(deltas.length > 0 && fourth.output_text === deltas);
  assert.equal((await client.responses.retrieve(fourth.id)).previous_response_id, third.id);
  await client.responses.delete(third.id);
  await assert.rejects(client.responses.retrieve(third.id), (err: { status?: number }) => err.status === 404);
  await stopChild(stack.child);
});
