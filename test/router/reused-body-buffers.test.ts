/**
 * The router reads large bodies into receive buffers it reuses (src/api/body-buffers.ts). Through
 * real HTTP, many distinct large prompts arrive at once and back to back: chats answered in full,
 * clients leaving right after their upload or halfway through it, bodies a model server refuses
 * from their headers while the router still writes them upstream, and stored Responses chaining
 * large inputs. Every echoed and stored text comes back byte-exact, the prefix index holds exactly
 * the keys of the prompts it was sent, and a repeat routes to the endpoint its first went to.
 * Reusing a buffer while a request, its upstream write or its deferred prefix hash still reads it
 * breaks one of these (giving the buffer back right after dispatch gets the model server a
 * corrupted body: 400). The hold of the deferred hash alone is tested with the approximate
 * producer (its index.test.ts): here it runs before the request ends.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import { parseInferenceRequest } from "../../src/gateway/parse-request.ts";
import type { SimServer } from "../../src/sim/server.ts";
import type { ApproxPrefixCacheProducer } from "../../src/scheduler/plugins/approx-prefix-cache-producer/index.ts";
import { promptBlockHashes } from "../../src/scheduler/plugins/shared/prompt-pieces.ts";
import type { SchedulingRequest } from "../../src/scheduler/framework/types.ts";
import { MODEL, prefixCacheConfig, routerFor, startSims } from "./harness.ts";

const KB = 1024;
const CHAT = "/v1/chat/completions";
const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];

/** `bytes` of ASCII words (no escapes: the router keeps it as the body's bytes), distinct per `seed`. */
function text(seed: number, bytes: number): string {
  let state = seed * 2654435761 + 1;
  let out = `document ${seed}:`;
  while (out.length < bytes) {
    state = (state * 1103515245 + 12345) >>> 0;
    out += ` ${WORDS[state % WORDS.length]}${state % 97}`;
  }
  return out.slice(0, bytes);
}

/** A chat body: the large text as the system message, a short tag (what the echo simulator answers) last. */
function chatBody(seed: number, bytes: number, model = MODEL): Buffer {
  const messages = [
    { role: "system", content: text(seed, bytes) },
    { role: "user", content: `tag ${seed}` },
  ];
  return Buffer.from(JSON.stringify({ model, max_tokens: 8, messages }));
}

/** Served by a simulator that refuses bodies over 32 KB from their headers, before reading them. */
const REFUSING_MODEL = "refusing-model";

/** Sends `body` on a raw connection and leaves: after the whole upload, or halfway through it. */
function leave(port: number, body: Buffer, when: "after-upload" | "mid-upload"): Promise<void> {
  return new Promise((resolve) => {
    const head = `POST ${CHAT} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
    const sent = when === "mid-upload" ? body.subarray(0, body.length >> 1) : body;
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(Buffer.concat([Buffer.from(head), sent]), () => socket.destroy());
    });
    socket.on("error", () => {});
    socket.on("close", () => resolve());
  });
}

/** A stored message's text: its content as given (a string) or its parts' text. */
function contentText(content: string | readonly object[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");
}

describe("reused receive buffers under concurrent large bodies", () => {
  const dir = mkdtempSync(join(tmpdir(), "llmd-body-buffers-"));
  let sims: SimServer[];
  let router: Router;
  let openai: OpenAI;

  before(async () => {
    // Room for every prompt in each endpoint's KV cache, so the router's index (sized to it) evicts none.
    const room = { "max-model-len": 400_000, "kv-cache-size": 200_000 };
    sims = [
      ...(await startSims(3, room)),
      ...(await startSims(1, { ...room, model: REFUSING_MODEL, "max-body-bytes": 32 * KB })),
    ];
    router = await routerFor(
      sims.map((s) => s.url),
      prefixCacheConfig("- type: approx-prefix-cache-producer"),
      { responses: { store: join(dir, "responses.sqlite") } },
    );
    openai = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "none", maxRetries: 0 });
  });

  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** A chat request through the openai client: the endpoint that served it, the echo checked. */
  async function chat(seed: number, body: Buffer): Promise<string> {
    const { data, response } = await openai.chat.completions
      .create(JSON.parse(body.toString()) as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    assert.equal(data.choices[0]?.message.content, `tag ${seed}`);
    return response.headers.get("x-llmd-endpoint") ?? "";
  }

  /**
   * Back-to-back bodies the refusing simulator answers 413 before reading them: each request ends
   * while the router may still write its body upstream (it closes that connection then), and the
   * next body arrives meanwhile.
   */
  async function refused(seed: number): Promise<Buffer[]> {
    // Built ahead and all of one size class, so a body is on its way as the one before it ends.
    const bodies = Array.from({ length: 16 }, (_, j) =>
      chatBody(seed + j, (260 + ((j * 53) % 240)) * KB, REFUSING_MODEL),
    );
    for (const body of bodies) {
      const response = await fetch(`${router.url}${CHAT}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      assert.equal(response.status, 413, await response.text());
    }
    return bodies;
  }

  /**
   * Two chained stored turns of large inputs, both read back byte-exact; the chat bodies the turns
   * were sent upstream as (the history's messages), whose prompts the index holds too.
   */
  async function chainedTurns(seed: number, bytes: number): Promise<Buffer[]> {
    const messages: { role: string; content: string }[] = [];
    const upstream: Buffer[] = [];
    let previous: string | undefined;
    for (const input of [text(seed, bytes), text(seed + 1, bytes + 7)]) {
      const turn = await openai.responses.create({
        model: MODEL,
        input,
        store: true,
        max_output_tokens: 4,
        ...(previous ? { previous_response_id: previous } : {}),
      });
      assert.ok(input.startsWith(turn.output_text) && turn.output_text.length > 0, turn.output_text);
      const items = await openai.responses.inputItems.list(turn.id);
      const stored = items.data.map((item) => (item.type === "message" ? contentText(item.content) : ""));
      assert.deepEqual(stored, [input]);
      messages.push({ role: "user", content: input });
      upstream.push(Buffer.from(JSON.stringify({ model: MODEL, messages })));
      messages.push({ role: "assistant", content: turn.output_text });
      previous = turn.id;
    }
    return upstream;
  }

  /** The endpoint whose index entry holds every block key of the prompt of chat `body`, with the keys. */
  function holderOf(body: Buffer): { key: string; hashes: Float64Array } | undefined {
    const producer = router.config.plugins.get("approx-prefix-cache-producer") as ApproxPrefixCacheProducer;
    const endpoints = router.pool.candidates();
    const request = parseInferenceRequest(CHAT, {}, body) as SchedulingRequest;
    const hashes = promptBlockHashes(request, producer.blockSizeFor(endpoints), 2048);
    const keys = endpoints.map((e) => e.metadata.key);
    const matched = new Int32Array(keys.length);
    producer.index.match(hashes, hashes.length, keys, matched);
    const at = matched.indexOf(hashes.length);
    return at < 0 ? undefined : { key: keys[at] as string, hashes };
  }

  /**
   * Every key the index holds is a key of a prompt some endpoint holds whole: a prompt hashed from
   * bytes another body had overwritten adds keys of no prompt sent (a prompt never dispatched, as a
   * client that left at once may be, adds none).
   */
  function assertIndexHoldsOnly(bodies: readonly Buffer[]): void {
    const producer = router.config.plugins.get("approx-prefix-cache-producer") as ApproxPrefixCacheProducer;
    const expected = new Map<string, Set<number>>();
    for (const body of bodies) {
      const held = holderOf(body);
      if (!held) continue;
      const keys = expected.get(held.key) ?? new Set<number>();
      for (const hash of held.hashes) keys.add(hash);
      expected.set(held.key, keys);
    }
    for (const endpoint of router.pool.candidates()) {
      const key = endpoint.metadata.key;
      assert.equal(producer.index.entries(key), expected.get(key)?.size ?? 0, `keys held by ${key}`);
    }
  }

  it("serves, stores and indexes every body as sent while clients come, go and chain", async () => {
    const port = router.port;
    const served = new Map<number, { body: Buffer; endpoint: string }>();
    const left: Buffer[] = [];
    const worker = async (w: number) => {
      for (let j = 0; j < 6; j++) {
        const seed = 100 * w + j;
        const body = chatBody(seed, (64 + ((seed * 37) % 448)) * KB);
        if (j % 3 === 1) {
          await leave(port, body, "after-upload");
          left.push(body);
        } else if (j % 3 === 2) {
          // A leaving client's upload interleaved with the next body's.
          await Promise.all([
            leave(port, body, "mid-upload"),
            leave(port, chatBody(seed + 50, 96 * KB), "after-upload"),
          ]);
          left.push(chatBody(seed + 50, 96 * KB));
        } else served.set(seed, { body, endpoint: await chat(seed, body) });
      }
    };
    const [, , , , ...upstream] = await Promise.all([
      worker(1),
      worker(2),
      worker(3),
      worker(4),
      chainedTurns(7, 300 * KB),
      chainedTurns(9, 80 * KB),
      refused(1000),
      refused(2000),
    ]);
    const completed = [...served.values()].map((s) => s.body);
    for (const body of completed) assert.ok(holderOf(body), `the index holds a ${body.length}-byte prompt`);
    assertIndexHoldsOnly([...completed, ...left, ...upstream.flat()]);
    for (const [seed, { body, endpoint }] of served)
      assert.equal(await chat(seed, body), endpoint, `prompt ${seed} routes where it was sent`);
  });
});
