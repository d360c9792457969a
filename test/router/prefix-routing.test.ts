import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { exampleConfig, MODEL, routerFor, startSims } from "./harness.ts";

/** A long shared system prompt (~2,000 tokens) so many whole KV blocks are shared. */
const SHARED = `You are a careful assistant. ${"Policy clause number x applies to every answer. ".repeat(160)}`;

interface Served {
  endpoint: string;
  cached: number;
}

async function ask(router: Router, question: string): Promise<Served> {
  const response = await fetch(`${router.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      max_tokens: 2,
      messages: [
        { role: "system", content: SHARED },
        { role: "user", content: question },
      ],
    }),
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { usage: { prompt_tokens_details?: { cached_tokens?: number } } };
  return {
    endpoint: response.headers.get("x-llmd-endpoint") ?? "",
    cached: body.usage.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

async function askSequentially(router: Router, n: number): Promise<Served[]> {
  const served: Served[] = [];
  for (let i = 0; i < n; i++) served.push(await ask(router, `question ${i}: what applies?`));
  return served;
}

describe("prefix-aware routing over HTTP", () => {
  let sims: SimServer[];
  before(async () => {
    sims = await startSims(3);
  });
  after(async () => {
    await Promise.all(sims.map((s) => s.close()));
  });

  it("sends requests sharing a prefix to the endpoint holding it, which reports cached tokens", async () => {
    const router = await routerFor(sims.map((s) => s.url));
    try {
      const served = await askSequentially(router, 4);
      assert.equal(new Set(served.map((s) => s.endpoint)).size, 1, JSON.stringify(served));
      assert.equal(served[0]?.cached, 0);
      for (const s of served.slice(1)) assert.ok(s.cached > 1000, `cached ${s.cached} tokens`);
    } finally {
      await router.close();
    }
  });

  it("keeps a large prompt's affinity whether its strings are decoded from the bytes or by JSON.parse", async () => {
    // ~20K-token prompts in ~80 KB bodies: the router decodes a long string without escapes
    // straight from the body's bytes (src/api/json-bytes.ts), one with an escape through
    // JSON.parse; the prompt text, and so its block hashes, are the same either way.
    const fresh = await startSims(3, { "max-model-len": 65536 });
    const router = await routerFor(fresh.map((s) => s.url));
    const long = SHARED.repeat(10);
    const sharedTokens = long.length / 4;
    const send = async (path: string, body: Record<string, unknown>): Promise<Served> => {
      const response = await fetch(`${router.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, max_tokens: 2, ...body }),
      });
      assert.equal(response.status, 200);
      const answer = (await response.json()) as {
        usage: { prompt_tokens_details?: { cached_tokens?: number } };
      };
      const cached = answer.usage.prompt_tokens_details?.cached_tokens ?? 0;
      return { endpoint: response.headers.get("x-llmd-endpoint") ?? "", cached };
    };
    const completion = (tail: string) => send("/v1/completions", { prompt: `${long}${tail}` });
    const chat = (tail: string) =>
      send("/v1/chat/completions", {
        messages: [
          { role: "system", content: `chat ${long}` },
          { role: "user", content: [{ type: "text", text: `${long}${tail}` }] },
        ],
      });
    try {
      for (const ask of [completion, chat]) {
        const plain = await ask(" plain tail");
        const escaped = await ask(' an "escaped"\n tail');
        const plainAgain = await ask(" plain tail again");
        assert.equal(plain.cached, 0);
        assert.deepEqual([escaped.endpoint, plainAgain.endpoint], [plain.endpoint, plain.endpoint]);
        for (const s of [escaped, plainAgain])
          assert.ok(s.cached > 0.9 * sharedTokens, `cached ${s.cached} of ${sharedTokens} tokens`);
      }
    } finally {
      await router.close();
      await Promise.all(fresh.map((s) => s.close()));
    }
  });

  it("sends an agent's token-id turns, each continuing the last, to the endpoint holding them", async () => {
    // Fresh simulators: the tests above warmed some. A 5,000-id first turn (long enough for the
    // gateway to hold it, src/tokenizer/id-prompts.ts), then turns adding 40 ids each.
    const fresh = await startSims(3);
    const router = await routerFor(fresh.map((s) => s.url));
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
    let prompt = Array.from({ length: 5000 }, (_, i) => 1000 + ((i * 7919) % 30000));
    try {
      const served: (Served & { prompt: number })[] = [];
      for (let turn = 0; turn < 4; turn++) {
        if (turn > 0) prompt = [...prompt, ...Array.from({ length: 40 }, (_, k) => 50_000 + turn * 40 + k)];
        const { data, response } = await client.completions
          .create({ model: MODEL, prompt, max_tokens: 2 })
          .withResponse();
        assert.equal(data.usage?.prompt_tokens, prompt.length);
        const cached = (data.usage as { prompt_tokens_details?: { cached_tokens?: number } } | undefined)
          ?.prompt_tokens_details?.cached_tokens;
        const endpoint = response.headers.get("x-llmd-endpoint") ?? "";
        served.push({ endpoint, cached: cached ?? 0, prompt: prompt.length });
      }
      assert.equal(new Set(served.map((s) => s.endpoint)).size, 1, JSON.stringify(served));
      assert.equal(served[0]?.cached, 0);
      for (let turn = 1; turn < 4; turn++)
        assert.ok(served[turn]!.cached >= served[turn - 1]!.prompt - 64, JSON.stringify(served));
      const metrics = await (await fetch(`${router.url}/metrics`)).text();
      const held = Number(/^llmd_token_id_prompt_cache_bytes (\d+)$/m.exec(metrics)?.[1]);
      assert.ok(held >= 5160 * 4, `${held} bytes of id prompts held`);
    } finally {
      await router.close();
      await Promise.all(fresh.map((s) => s.close()));
    }
  });

  it("with the load-only example config the same requests spread and find no cache", async () => {
    // Fresh simulators: the previous test warmed one of them.
    const fresh = await startSims(3);
    const router = await routerFor(
      fresh.map((s) => s.url),
      exampleConfig("load-only"),
    );
    try {
      // Concurrent, as real traffic: the router's in-flight counts spread them.
      const served = await Promise.all([0, 1, 2].map((i) => ask(router, `question ${i}: what applies?`)));
      assert.equal(new Set(served.map((s) => s.endpoint)).size, 3, JSON.stringify(served));
      for (const s of served) assert.equal(s.cached, 0);
    } finally {
      await router.close();
      await Promise.all(fresh.map((s) => s.close()));
    }
  });
});
