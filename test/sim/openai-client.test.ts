/** The simulator through the official `openai` client: streaming and not, chat and completions. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { Agent, get, type IncomingMessage } from "node:http";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, startTestSim } from "./helpers.ts";

describe("openai client against startSimServer", () => {
  let sim: SimServer;
  let client: OpenAI;
  before(async () => {
    sim = await startTestSim({ mode: "echo", "served-model-name": [MODEL, "alias"] });
    client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(() => sim.close());

  test("non-streaming chat echoes the last user message with usage", async () => {
    const messages = [
      { role: "system" as const, content: "be brief" },
      { role: "user" as const, content: "Hello simulator, echo me!" },
    ];
    const res = await client.chat.completions.create({ model: MODEL, messages });
    assert.equal(res.object, "chat.completion");
    assert.equal(res.choices[0]!.message.content, "Hello simulator, echo me!");
    assert.equal(res.choices[0]!.finish_reason, "stop");
    assert.equal(res.usage!.completion_tokens, 7); // 25 chars = 7 four-char tokens
    assert.ok(res.usage!.prompt_tokens > 7);
    assert.equal(res.usage!.prompt_tokens_details!.cached_tokens, 0);
  });

  test("streaming chat delivers every token and a final usage chunk", async () => {
    const stream = await client.chat.completions.create({
      model: "alias",
      messages: [{ role: "user", content: "stream this text back to me please" }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 5,
    });
    let text = "";
    let chunks = 0;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.choices[0]) {
        text += chunk.choices[0].delta.content ?? "";
        finish = chunk.choices[0].finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, "stream this text bac");
    assert.equal(finish, "length");
    assert.equal(chunks, 6); // 5 token chunks + usage
    assert.equal(usage!.completion_tokens, 5);
  });

  test("completions: non-streaming, stop string, then a repeat reports cached tokens", async () => {
    const prompt = "The quick brown fox jumps over the lazy dog. ".repeat(40);
    const first = await client.completions.create({ model: MODEL, prompt, max_tokens: 12, stop: ["fox"] });
    assert.equal(first.choices[0]!.text, "The quick brown ");
    assert.equal(first.choices[0]!.finish_reason, "stop");
    assert.equal(first.usage!.completion_tokens, 5); // tokens up to and including "fox"
    const again = await client.completions.create({ model: MODEL, prompt, max_tokens: 4 });
    const promptTokens = again.usage!.prompt_tokens;
    // Whole 16-token blocks, never the last prompt token.
    assert.equal(again.usage!.prompt_tokens_details!.cached_tokens, Math.floor((promptTokens - 1) / 16) * 16);
  });

  test("streaming completion with include_usage", async () => {
    const stream = await client.completions.create({
      model: MODEL,
      prompt: "abcdefghijklmnopqrstuvwxyz",
      max_tokens: 100,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, "abcdefghijklmnopqrstuvwxyz");
    assert.equal(usage!.completion_tokens, 7);
    assert.equal(usage!.total_tokens, usage!.prompt_tokens + 7);
  });

  test("models lists every served name", async () => {
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids, [MODEL, "alias"]);
  });

  test("keeps idle connections for 65 s, so a reusing router does not race the server's close", async () => {
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      get(`${sim.url}/health`, { agent: new Agent({ keepAlive: true }) }, resolve).on("error", reject),
    );
    res.resume();
    assert.equal(res.headers["keep-alive"], "timeout=65");
  });

  test("errors surface as the client's typed errors", async () => {
    await assert.rejects(
      client.chat.completions.create({ model: "nope", messages: [] }),
      OpenAI.BadRequestError,
    );
    const missing = client.chat.completions.create({
      model: "nope",
      messages: [{ role: "user", content: "x" }],
    });
    await assert.rejects(missing, OpenAI.NotFoundError);
  });

  test("bad sampling parameters are BadRequestErrors naming the parameter", async () => {
    const messages = [{ role: "user" as const, content: "x" }];
    const cases: [Record<string, unknown>, string][] = [
      [{ temperature: "hot" }, "temperature"],
      [{ temperature: -1 }, "temperature"],
      [{ top_p: 2 }, "top_p"],
      [{ n: 0 }, "n"],
      [{ max_tokens: -5 }, "max_tokens"],
      [{ messages: [{ role: "wizard", content: "x" }] }, "messages[0].role"],
    ];
    for (const [extra, param] of cases) {
      const request = { model: MODEL, messages, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming;
      await assert.rejects(client.chat.completions.create(request), (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError, String(err));
        assert.deepEqual([err.status, err.param, err.code], [400, param, "invalid_request"]);
        return true;
      });
    }
  });
});

test("the real CLI process serves the openai client", async () => {
  const args = ["--import", "tsx", "src/cli/main.ts", "sim", "--port", "0", "--host", "127.0.0.1"];
  const flags = [
    "--model",
    MODEL,
    "--mode",
    "random",
    "--seed",
    "3",
    "--time-to-first-token",
    "5ms",
    "--speed",
    "5",
    "--stream-interval",
    "4",
  ];
  const child = spawn(process.execPath, [...args, ...flags], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    let out = "";
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once("exit", (code) => reject(new Error(`sim exited with ${code}: ${out}`)));
    });
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 });
    const res = await client.completions.create({
      model: MODEL,
      prompt: "hi there",
      max_tokens: 8,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    assert.equal(res.usage!.completion_tokens, 8);
    assert.equal(res.choices[0]!.text.length, 32);
    assert.equal(res.choices[0]!.finish_reason, "length");
    // --stream-interval 4: the first token at once, then every 4 tokens, then the rest at the end.
    const stream = await client.completions.create({
      model: MODEL,
      prompt: "hi there",
      max_tokens: 10,
      ignore_eos: true,
      stream: true,
    } as OpenAI.CompletionCreateParamsStreaming);
    const chunkTokens: number[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      chunkTokens.push(chunk.choices[0]!.text.length / 4);
      finish = chunk.choices[0]!.finish_reason ?? finish;
    }
    assert.deepEqual(chunkTokens, [1, 4, 4, 1]);
    assert.equal(finish, "length");
  } finally {
    child.kill("SIGTERM");
    await once(child, "exit");
  }
});
