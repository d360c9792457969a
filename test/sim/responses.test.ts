/**
 * The simulator's stateless `POST /v1/responses` through the official `openai` client: string and
 * item input, the typed event stream (raw and through `responses.stream`), the token limit, prefix
 * caching shared with chat, and the 400s for bad items and `previous_response_id`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, promptOfTokens, scrape, startTestSim } from "./helpers.ts";

/** Block size the test server runs with (the default). */
const BLOCK = 16;

/** Prompt tokens a repeated prefix of `tokens` prompt tokens hits: whole blocks, never the last token. */
const cachedFor = (tokens: number) => Math.floor((tokens - 1) / BLOCK) * BLOCK;

describe("POST /v1/responses", () => {
  let sim: SimServer;
  let client: OpenAI;
  before(async () => {
    sim = await startTestSim({ mode: "echo" });
    client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(() => sim.close());

  test("string input: a completed response echoing the input, with the request's fields repeated", async () => {
    const succeeded = async () => (await scrape(sim.url)).get("vllm:request_success_total") ?? 0;
    const before = await succeeded();
    const res = await client.responses.create({
      model: MODEL,
      input: "Hello responses, echo me!",
      instructions: "be brief",
      temperature: 0.5,
      top_p: 0.9,
      metadata: { run: "t1" },
      store: true,
      tools: [{ type: "function", name: "noop", parameters: {}, strict: false }],
    });
    assert.match(res.id, /^resp_/);
    assert.equal(res.object, "response");
    assert.equal(res.status, "completed");
    assert.equal(res.incomplete_details, null);
    assert.equal(res.output_text, "Hello responses, echo me!");
    assert.equal(res.output.length, 1);
    const item = res.output[0]!;
    assert.equal(item.type, "message");
    assert.ok(item.type === "message");
    assert.equal(item.role, "assistant");
    assert.match(item.id, /^msg_/);
    assert.deepEqual(item.content, [
      { type: "output_text", text: "Hello responses, echo me!", annotations: [] },
    ]);
    // Stateless, as vLLM without its store: `store: true` is accepted and answered `false`.
    assert.equal((res as { store?: unknown }).store, false);
    assert.equal(res.previous_response_id, null);
    assert.equal(res.instructions, "be brief");
    assert.equal(res.temperature, 0.5);
    assert.equal(res.top_p, 0.9);
    assert.deepEqual(res.metadata, { run: "t1" });
    assert.equal(res.tools.length, 1);
    assert.equal(res.model, MODEL);
    assert.ok(Math.abs(res.created_at - Date.now() / 1000) < 60);
    assert.deepEqual(res.usage, {
      input_tokens: res.usage!.input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 7, // 25 characters = 7 four-character tokens
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: res.usage!.input_tokens + 7,
    });
    // The prompt is the chat rendering of [system: instructions, user: input].
    const chat = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "Hello responses, echo me!" },
      ],
    });
    assert.equal(res.usage!.input_tokens, chat.usage!.prompt_tokens);
    assert.equal((await succeeded()) - before, 2);
  });

  test("item input renders as the chat it maps to, so a chat request with those messages hits its cache", async () => {
    const question = promptOfTokens(100, "items");
    const res = await client.responses.create({
      model: MODEL,
      instructions: "You answer about weather.",
      input: [
        { role: "user", content: [{ type: "input_text", text: question }] },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
        { type: "function_call_output", call_id: "call_1", output: "sunny, 21C" },
        {
          type: "message",
          id: "msg_prev",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "It is sunny.", annotations: [] }],
        },
        { role: "developer", content: "Keep it short." },
        { role: "user", content: "Thanks, now echo this" },
      ],
    });
    assert.equal(res.status, "completed");
    assert.equal(res.output_text, "Thanks, now echo this"); // echo mode answers the last user message
    assert.equal(res.usage!.input_tokens_details.cached_tokens, 0);
    const chat = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: "system", content: "You answer about weather." },
        { role: "user", content: question },
        { role: "assistant", content: 'get_weather({"city":"Oslo"})' },
        { role: "tool", tool_call_id: "call_1", content: "sunny, 21C" },
        { role: "assistant", content: "It is sunny." },
        { role: "system", content: "Keep it short." },
        { role: "user", content: "Thanks, now echo this" },
      ],
      max_tokens: 1,
    });
    assert.equal(chat.usage!.prompt_tokens, res.usage!.input_tokens);
    assert.equal(chat.usage!.prompt_tokens_details!.cached_tokens, cachedFor(res.usage!.input_tokens));
  });

  test("a second turn repeating the first conversation reports cached input tokens", async () => {
    const opening = promptOfTokens(200, "turns");
    const first = await client.responses.create({ model: MODEL, input: opening, max_output_tokens: 8 });
    assert.equal(first.usage!.input_tokens_details.cached_tokens, 0);
    const answer = first.output[0]!;
    assert.ok(answer.type === "message");
    const second = await client.responses.create({
      model: MODEL,
      input: [
        { role: "user", content: opening },
        answer, // the first answer passed back as the SDKs do: its output item
        { role: "user", content: "and one more question" },
      ],
      max_output_tokens: 8,
    });
    const cached = second.usage!.input_tokens_details.cached_tokens;
    assert.ok(cached > 0, "the repeated conversation hits the prefix cache");
    // At least every whole block of the first prompt, and never the whole second prompt.
    assert.ok(cached >= cachedFor(first.usage!.input_tokens), `cached ${cached}`);
    assert.ok(cached < second.usage!.input_tokens);
  });

  test("max_output_tokens cuts the output: status incomplete with reason max_output_tokens", async () => {
    const res = await client.responses.create({
      model: MODEL,
      input: "a long input that the limit will cut short",
      max_output_tokens: 3,
    });
    assert.equal(res.status, "incomplete");
    assert.deepEqual(res.incomplete_details, { reason: "max_output_tokens" });
    assert.equal(res.max_output_tokens, 3);
    assert.equal(res.output_text, "a long input");
    assert.equal(res.usage!.output_tokens, 3);
  });

  test("streaming: typed events in order, deltas concatenate to the text, final usage", async () => {
    const stream = await client.responses.create({
      model: MODEL,
      input: "stream this text back to me",
      stream: true,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((e) => e.type);
    const deltas = events.filter((e) => e.type === "response.output_text.delta");
    assert.deepEqual(types, [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...deltas.map(() => "response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    assert.equal(deltas.length, 7, "one delta per streamed token (stream-interval 1)");
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    const created = events[0]!;
    assert.ok(created.type === "response.created");
    assert.equal(created.response.status, "in_progress");
    assert.deepEqual(created.response.output, []);
    const added = events[2]!;
    assert.ok(added.type === "response.output_item.added");
    assert.equal(added.item.type, "message");
    const itemId = added.item.id;
    const text = deltas.map((d) => (d.type === "response.output_text.delta" ? d.delta : "")).join("");
    assert.equal(text, "stream this text back to me");
    for (const d of deltas) {
      assert.ok(d.type === "response.output_text.delta");
      assert.deepEqual([d.item_id, d.output_index, d.content_index], [itemId, 0, 0]);
    }
    const done = events.find((e) => e.type === "response.output_text.done");
    assert.ok(done?.type === "response.output_text.done");
    assert.equal(done.text, text);
    const completed = events.at(-1)!;
    assert.ok(completed.type === "response.completed");
    assert.equal(completed.response.id, created.response.id);
    assert.equal(completed.response.status, "completed");
    const output = completed.response.output[0]!;
    assert.ok(output.type === "message" && output.content[0]!.type === "output_text");
    assert.equal(output.content[0]!.text, text);
    assert.equal(completed.response.usage!.output_tokens, 7);
    assert.equal(
      completed.response.usage!.total_tokens,
      completed.response.usage!.input_tokens + completed.response.usage!.output_tokens,
    );
  });

  test("streaming wire framing: `event: <type>` before each data line, no [DONE]", async () => {
    const res = await fetch(`${sim.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, input: "wire framing text", stream: true, max_output_tokens: 2 }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const body = await res.text();
    assert.ok(!body.includes("[DONE]"));
    const blocks = body.split("\n\n").filter((b) => b !== "");
    for (const block of blocks) {
      const [eventLine, dataLine, ...rest] = block.split("\n");
      assert.deepEqual(rest, []);
      const type = eventLine!.replace(/^event: /, "");
      assert.equal(JSON.parse(dataLine!.replace(/^data: /, "")).type, type);
    }
    const last = JSON.parse(blocks.at(-1)!.split("\n")[1]!.slice("data: ".length));
    // A stream cut by the limit still ends with response.completed, as vLLM's does.
    assert.equal(last.type, "response.completed");
    assert.equal(last.response.status, "incomplete");
    assert.deepEqual(last.response.incomplete_details, { reason: "max_output_tokens" });
  });

  test("responses.stream() accumulates the text and finalResponse() has the usage", async () => {
    const stream = client.responses.stream({
      model: MODEL,
      input: [{ role: "user", content: [{ type: "input_text", text: "helper stream text" }] }],
    });
    const snapshots: string[] = [];
    stream.on("response.output_text.delta", (e) => snapshots.push(e.snapshot));
    const final = await stream.finalResponse();
    assert.equal(final.output_text, "helper stream text");
    assert.equal(snapshots.at(-1), "helper stream text");
    assert.equal(snapshots.length, 5);
    assert.equal(final.status, "completed");
    assert.equal(final.usage!.output_tokens, 5);
    assert.ok(final.usage!.input_tokens > 5);
  });

  test("ignore_eos fills the limit, as on the chat path", async () => {
    const res = await client.responses.create({
      model: MODEL,
      input: "hi",
      max_output_tokens: 6,
      ignore_eos: true,
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    assert.equal(res.usage!.output_tokens, 6);
    assert.equal(res.output_text, "hi".repeat(12));
    assert.equal(res.status, "incomplete");
  });

  test("an output cut to nothing by a stop string still opens and closes its message", async () => {
    const stream = await client.responses.create({
      model: MODEL,
      input: "stop right here",
      stop: ["st"],
      stream: true,
    } as OpenAI.Responses.ResponseCreateParamsStreaming);
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    assert.deepEqual(
      events.map((e) => e.type),
      [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
      ],
    );
    const completed = events.at(-1)!;
    assert.ok(completed.type === "response.completed");
    assert.equal(completed.response.status, "completed");
    assert.equal(completed.response.usage!.output_tokens, 1); // the token that completed "st"
  });

  test("an injected failure answers before any event, as for chat", async () => {
    await assert.rejects(
      client.responses.create({ model: MODEL, input: "x" }, { headers: { "x-return-error": "429" } }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 429,
    );
  });

  async function rejectsWith(body: Record<string, unknown>, param: string, code = "invalid_request") {
    await assert.rejects(
      client.responses.create({ model: MODEL, input: "x", ...body } as never),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError, String(err));
        assert.equal(err.status, 400);
        assert.equal(err.type, "invalid_request_error");
        assert.equal(err.param, param, `${JSON.stringify(body)}: ${err.message}`);
        assert.equal(err.code, code);
        return true;
      },
    );
  }

  test("bad items get 400 with param input", async () => {
    const bad: unknown[] = [
      [{ type: "image_generation_call", id: "ig_1" }], // unknown type
      [{ role: "robot", content: "beep" }], // bad role
      [{ role: "user" }], // message without content
      [{ role: "user", content: [{ type: "input_image", image_url: "http://x" }] }], // unsupported part
      [{ role: "user", content: [{ type: "input_text" }] }], // part without text
      [{ type: "function_call", name: "f", arguments: "{}" }], // no call_id
      [{ type: "function_call_output", call_id: "c1" }], // no output
      ["just a string item"],
      [],
      42,
    ];
    for (const input of bad) await rejectsWith({ input }, "input");
    await rejectsWith({ input: undefined }, "input");
  });

  test("previous_response_id: 400 previous_response_not_found (the simulator stores nothing)", async () => {
    await assert.rejects(
      client.responses.create({ model: MODEL, input: "next turn", previous_response_id: "resp_abc123" }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.equal(err.param, "previous_response_id");
        assert.equal(err.code, "previous_response_not_found");
        assert.equal(err.type, "invalid_request_error");
        assert.equal(
          (err.error as { message: string }).message,
          "Previous response with id 'resp_abc123' not found.",
        );
        return true;
      },
    );
  });

  test("other bad fields name their param", async () => {
    await rejectsWith({ max_output_tokens: 0 }, "max_output_tokens");
    await rejectsWith({ temperature: 3 }, "temperature");
    await rejectsWith({ top_p: "high" }, "top_p");
    await rejectsWith({ instructions: 7 }, "instructions");
    await rejectsWith({ tools: "all" }, "tools");
    await rejectsWith({ metadata: { n: 1 } }, "metadata");
    await rejectsWith({ store: "yes" }, "store");
    await rejectsWith({ background: true }, "background");
    await rejectsWith({ model: "" }, "model");
    await rejectsWith({ input: promptOfTokens(200_000, "long") }, "input", "context_length_exceeded");
  });
});
