import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeBody, prefillBody, readPrefillAnswer, rewriteCachedTokens } from "./legs.ts";

const messages = [{ role: "user", content: "hi" }];

test("chat prefill leg: reference §5.3's body (one token, no stream, do_remote_decode)", () => {
  const client = {
    model: "m",
    messages,
    max_tokens: 256,
    stream: true,
    stream_options: { include_usage: true },
  };
  assert.deepEqual(prefillBody("/v1/chat/completions", client), {
    model: "m",
    messages,
    max_tokens: 1,
    stream: false,
    kv_transfer_params: {
      do_remote_decode: true,
      do_remote_prefill: false,
      remote_engine_id: null,
      remote_block_ids: null,
      remote_host: null,
      remote_port: null,
    },
  });
  assert.equal(client.max_tokens, 256, "the client's body is not changed");
});

test("token limits per API: chat/completions, Responses, generate, messages", () => {
  const chat = prefillBody("/v1/chat/completions", { max_completion_tokens: 50, min_tokens: 10 });
  assert.deepEqual([chat.max_tokens, chat.max_completion_tokens, chat.min_tokens], [1, 1, 1]);
  const completions = prefillBody("/v1/completions", { prompt: "x" });
  assert.equal(completions.max_tokens, 1, "set even when the client gave no limit");
  assert.equal("min_tokens" in completions, false);
  assert.equal(prefillBody("/v1/responses", { max_output_tokens: 99 }).max_output_tokens, 1);
  const generate = prefillBody("/inference/v1/generate", {
    sampling_params: { max_tokens: 9, min_tokens: 3, top_p: 0.5 },
  });
  assert.deepEqual(generate.sampling_params, { max_tokens: 1, min_tokens: 1, top_p: 0.5 });
  assert.equal(prefillBody("/v1/messages", { max_tokens: 400 }).max_tokens, 1);
});

test("decode leg: the client's body as sent plus the prefill's params, verbatim", () => {
  const client = { model: "m", messages, max_tokens: 256, stream: true };
  const params = {
    do_remote_prefill: true,
    do_remote_decode: false,
    remote_engine_id: "e",
    remote_block_ids: [1, 2],
    remote_host: "10.0.0.3",
    remote_port: 5600,
    tp_size: 1,
  };
  assert.deepEqual(decodeBody(client, params), { ...client, kv_transfer_params: params });
  assert.equal(decodeBody(client, undefined), client, "no params: the decode server prefills locally");
});

test("the prefill's answer: its params and cached tokens (null or missing count as 0)", () => {
  const params = { remote_engine_id: "e" };
  assert.deepEqual(
    readPrefillAnswer({
      kv_transfer_params: params,
      usage: { prompt_tokens: 9, prompt_tokens_details: { cached_tokens: 4 } },
    }),
    { kvTransferParams: params, cachedTokens: 4 },
  );
  assert.deepEqual(readPrefillAnswer({ usage: { prompt_tokens: 9, prompt_tokens_details: null } }), {
    kvTransferParams: undefined,
    cachedTokens: 0,
  });
  assert.equal(
    readPrefillAnswer({ usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 7 } } })
      .cachedTokens,
    7,
    "Responses usage",
  );
  assert.deepEqual(readPrefillAnswer("not json"), { kvTransferParams: undefined, cachedTokens: 0 });
});

test("cached_tokens rewritten in chat usage, Responses usage and a Responses event", () => {
  const chat = { usage: { prompt_tokens: 9, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 } } };
  assert.ok(rewriteCachedTokens(chat, 8));
  assert.deepEqual(chat.usage.prompt_tokens_details, { cached_tokens: 8, audio_tokens: 0 });
  const bare: Record<string, unknown> = { usage: { prompt_tokens: 9 } };
  assert.ok(rewriteCachedTokens(bare, 3));
  assert.deepEqual(bare.usage, { prompt_tokens: 9, prompt_tokens_details: { cached_tokens: 3 } });
  const event = {
    type: "response.completed",
    response: { usage: { input_tokens: 9, input_tokens_details: { cached_tokens: 1 } } },
  };
  assert.ok(rewriteCachedTokens(event, 5));
  assert.equal(event.response.usage.input_tokens_details.cached_tokens, 5);
  assert.equal(rewriteCachedTokens({ usage: null }, 5), false);
});
