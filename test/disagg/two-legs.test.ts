/**
 * llm-d's two-leg P/D protocol through real processes on loopback: client (the openai package) →
 * router (llm-d's pd-epp-config.yaml) → llmd sidecar → prefill and decode simulators with
 * NixlConnector KV transfer, and the router running both legs itself. Inspection proxies in front
 * of the simulators show each leg's body as reference §5.3 gives it.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { PREFILL_KV_TRANSFER_PARAMS } from "../../src/disagg/legs.ts";
import { metricSum, MODEL } from "../router/harness.ts";
import type { Seen } from "./inspection-proxy.ts";
import { type PdStack, startPdStack } from "./pd-stack.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A prompt of about 300 tokens no other request shares (the decider sends it to prefill). */
const prompt = (tag: string) =>
  `${tag} `.repeat(1) + "the quick brown fox jumps over the lazy dog ".repeat(30);

const client = (stack: PdStack) =>
  new OpenAI({ baseURL: `${stack.router.url}/v1`, apiKey: "unused", maxRetries: 0 });

/** The last leg each proxy saw. */
const last = (legs: Seen[]) => legs[legs.length - 1] as Seen;

/** Both legs of the last request, checked against reference §5.3. */
function checkLegs(stack: PdStack, clientBody: Record<string, unknown>, prefillLegs = 1) {
  assert.equal(stack.prefillProxy.seen.length, prefillLegs, "one prefill leg");
  const prefill = last(stack.prefillProxy.seen);
  const decode = last(stack.decodeProxy.seen);
  const { stream_options: _, ...unstreamed } = clientBody;
  assert.deepEqual(prefill.body, {
    ...unstreamed,
    max_tokens: 1,
    stream: false,
    kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS,
  });
  const returned = JSON.parse(prefill.answer).kv_transfer_params;
  assert.equal(returned.remote_engine_id, "prefill-0");
  assert.equal(returned.do_remote_prefill, true);
  assert.deepEqual(
    decode.body,
    { ...clientBody, kv_transfer_params: returned },
    "the decode leg: as sent + the params",
  );
  const id = prefill.headers["x-request-id"];
  assert.match(String(id), UUID);
  assert.equal(decode.headers["x-request-id"], id, "one fresh x-request-id on both legs");
  assert.notEqual(id, "client-id");
  for (const leg of [prefill, decode]) assert.equal(leg.headers["x-prefiller-host-port"], undefined);
  return { prefillAnswer: JSON.parse(prefill.answer) };
}

async function blocksHeld(stack: PdStack): Promise<number> {
  return metricSum(await (await fetch(`${stack.prefill.url}/metrics`)).text(), "llmd_sim_kv_blocks_held");
}

for (const legs of ["sidecar", "router"] as const) {
  describe(`P/D chat with legs run by the ${legs}`, () => {
    let stack: PdStack;
    before(async () => {
      stack = await startPdStack(legs);
    });
    after(() => stack.close());

    it("non-streaming: §5.3's legs, cached_tokens from the prefill, both endpoints named", async () => {
      const body = {
        model: MODEL,
        messages: [{ role: "user" as const, content: prompt(`${legs}-json`) }],
        max_tokens: 8,
      };
      const { data, response } = await client(stack)
        .chat.completions.create(body, { headers: { "x-request-id": "client-id" } })
        .withResponse();
      assert.equal(data.usage?.completion_tokens, 8);
      const { prefillAnswer } = checkLegs(stack, body);
      const decodeAnswer = JSON.parse(last(stack.decodeProxy.seen).answer);
      assert.ok(
        decodeAnswer.usage.prompt_tokens_details.cached_tokens > 0,
        "the decode pulled the prompt's KV",
      );
      assert.equal(
        data.usage?.prompt_tokens_details?.cached_tokens,
        prefillAnswer.usage.prompt_tokens_details?.cached_tokens ?? 0,
        "the client sees the prefill's cache hit",
      );
      assert.equal(response.headers.get("x-llmd-endpoint"), "default/decode-0");
      assert.equal(response.headers.get("x-llmd-prefill-endpoint"), "default/prefill-0");
      assert.equal(await blocksHeld(stack), 0, "the decode pulled every held block");
    });

    it("streaming: the prefill leg unstreamed, the client's stream with the prefill's cached_tokens", async () => {
      stack.prefillProxy.seen.length = 0;
      // The same prompt twice: the second prefill finds it cached, and the client sees that count.
      const content = prompt(`${legs}-stream`);
      await client(stack).chat.completions.create({
        model: MODEL,
        messages: [{ role: "user", content }],
        max_tokens: 2,
      });
      const body = {
        model: MODEL,
        messages: [{ role: "user", content: `${content} and again` }],
        max_tokens: 6,
        stream: true,
        stream_options: { include_usage: true },
      };
      const stream = await client(stack).chat.completions.create(
        body as OpenAI.ChatCompletionCreateParamsStreaming,
      );
      let text = "";
      let usage: OpenAI.CompletionUsage | undefined | null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        if (chunk.usage) usage = chunk.usage;
      }
      assert.ok(text.length > 0);
      assert.equal(usage?.completion_tokens, 6);
      const { prefillAnswer } = checkLegs(stack, body, 2);
      const prefillCached = prefillAnswer.usage.prompt_tokens_details.cached_tokens;
      assert.ok(prefillCached > 0, "the second prefill hit its cache");
      assert.equal(usage?.prompt_tokens_details?.cached_tokens, prefillCached);
      assert.equal(await blocksHeld(stack), 0);
    });

    it("a client's own x-prefiller-host-port is dropped: it cannot pick where its prefill runs", async () => {
      const before = stack.prefillProxy.seen.length;
      const decoded = stack.decodeProxy.seen.length;
      // 3 tokens: below the decider's 16, so the request runs decode-only.
      const res = await fetch(`${stack.router.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-prefiller-host-port": stack.prefillProxy.url.slice(7),
        },
        body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
      });
      assert.equal(res.status, 200);
      assert.equal(stack.prefillProxy.seen.length, before, "no prefill leg");
      assert.equal(stack.decodeProxy.seen.length, decoded + 1);
      assert.equal(last(stack.decodeProxy.seen).headers["x-prefiller-host-port"], undefined);
      assert.equal(last(stack.decodeProxy.seen).body.kv_transfer_params, undefined);
      assert.equal(res.headers.get("x-llmd-prefill-endpoint"), null);
      const metrics = await (await fetch(`${stack.router.url}/metrics`)).text();
      const decisions = (type: string) =>
        Number(
          new RegExp(`disagg_decision_total\\{[^}]*decision_type="${type}"[^}]*\\} (\\d+)`).exec(
            metrics,
          )?.[1],
        );
      assert.equal(decisions("prefill-decode"), 3, "the P/D requests so far");
      assert.equal(decisions("decode-only"), 1);
    });

    it("12 concurrent requests, half streaming: every one served, no block left held", async () => {
      const before = stack.prefillProxy.seen.length;
      const one = async (i: number) => {
        const messages = [{ role: "user" as const, content: prompt(`${legs}-burst-${i}`) }];
        if (i % 2 === 0) {
          const done = await client(stack).chat.completions.create({ model: MODEL, messages, max_tokens: 4 });
          return done.usage?.completion_tokens;
        }
        const stream = await client(stack).chat.completions.create({
          model: MODEL,
          messages,
          max_tokens: 4,
          stream: true,
          stream_options: { include_usage: true },
        });
        let tokens: number | undefined;
        for await (const chunk of stream) tokens = chunk.usage?.completion_tokens ?? tokens;
        return tokens;
      };
      const served = await Promise.all(Array.from({ length: 12 }, (_, i) => one(i)));
      assert.deepEqual(served, Array(12).fill(4));
      assert.equal(stack.prefillProxy.seen.length - before, 12, "each ran both legs");
      assert.equal(await blocksHeld(stack), 0);
    });

    it("a prefill answering 503 is retried; past the retries its answer reaches the client", async () => {
      await stack.close();
      stack = await startPdStack(legs, { maxRetries: 2, backoffMs: 10 });
      stack.prefillProxy.failNext(2);
      const body = {
        model: MODEL,
        messages: [{ role: "user" as const, content: prompt(`${legs}-retry`) }],
        max_tokens: 3,
      };
      const served = await client(stack).chat.completions.create(body);
      assert.equal(served.usage?.completion_tokens, 3);
      assert.deepEqual(
        stack.prefillProxy.seen.map((s) => s.status),
        [503, 503, 200],
      );
      stack.prefillProxy.failNext(3);
      const res = await fetch(`${stack.router.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...body, messages: [{ role: "user", content: prompt(`${legs}-fail`) }] }),
      });
      assert.equal(res.status, 503);
      assert.equal(
        ((await res.json()) as { error: { message: string } }).error.message,
        "overloaded",
        "the prefill's own answer",
      );
      assert.equal(stack.prefillProxy.seen.length, 6);
      assert.equal(stack.decodeProxy.seen.length, 1, "no decode leg without a prefill");
      assert.equal(await blocksHeld(stack), 0);
    });
  });
}
