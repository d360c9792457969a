/**
 * P/D KV transfer between two simulators over loopback (`--kv-transfer-config`): the prefill leg
 * returns NixlConnector's `kv_transfer_params` and holds its blocks, the decode leg pulls them
 * through the side channel and skips its prefill, and every held block returns to the pool.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, metric, promptOfTokens, scrape, startTestSim, waitForMetrics } from "./helpers.ts";
import { type LegReply, NIXL, postLeg } from "./kv-legs.ts";
import { PREFILL_KV_TRANSFER_PARAMS } from "../../src/disagg/legs.ts";

let prefill: SimServer;
let decode: SimServer;

before(async () => {
  prefill = await startTestSim({ "kv-transfer-config": JSON.stringify({ ...NIXL, engine_id: "prefill-0" }) });
  decode = await startTestSim({ "kv-transfer-config": NIXL });
});
after(async () => {
  await Promise.all([prefill.close(), decode.close()]);
});

const messages = (tag: string) => [{ role: "user", content: promptOfTokens(600, tag) }];

test("the prefill leg returns NixlConnector's kv_transfer_params and holds its blocks", async () => {
  const body = { model: MODEL, messages: messages("shape"), max_tokens: 1, stream: false };
  const { status, json } = await postLeg(prefill.url, "/v1/chat/completions", {
    ...body,
    kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS,
  });
  assert.equal(status, 200);
  assert.equal(json.object, "chat.completion");
  assert.equal(json.usage.completion_tokens, 1);
  const p = json.kv_transfer_params;
  assert.equal(p.do_remote_prefill, true);
  assert.equal(p.do_remote_decode, false);
  assert.equal(p.remote_engine_id, "prefill-0");
  assert.equal(p.remote_host, "127.0.0.1");
  assert.ok(Number.isInteger(p.remote_port) && p.remote_port > 0);
  assert.equal(p.tp_size, 1);
  assert.ok(p.remote_block_ids.length >= Math.ceil(json.usage.prompt_tokens / 16));
  assert.equal(metric(await scrape(prefill.url), "llmd_sim_kv_blocks_held"), p.remote_block_ids.length);

  const decoded = await postLeg(decode.url, "/v1/chat/completions", {
    ...body,
    max_tokens: 8,
    kv_transfer_params: p,
  });
  assert.equal(decoded.status, 200);
  assert.equal(decoded.json.usage.completion_tokens, 8);
  assert.equal(decoded.json.usage.prompt_tokens_details.cached_tokens, json.usage.prompt_tokens - 1);
  assert.equal(metric(await scrape(prefill.url), "llmd_sim_kv_blocks_held"), 0);
  const d = await scrape(decode.url);
  assert.equal(metric(d, "llmd_sim_kv_transfers_total"), 1);
  assert.equal(metric(d, "llmd_sim_kv_transfer_bytes_total"), json.usage.prompt_tokens * 131072);
  assert.equal(metric(d, "llmd_sim_kv_transfer_duration_seconds_count"), 1);
  assert.equal(metric(d, "llmd_sim_kv_transfer_fallbacks_total"), 0);
});

test("both legs on /v1/completions, the decode streaming", async () => {
  const prompt = promptOfTokens(300, "completions");
  const first = await postLeg(prefill.url, "/v1/completions", {
    model: MODEL,
    prompt,
    max_tokens: 1,
    kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS,
  });
  assert.equal(first.status, 200);
  const res = await fetch(`${decode.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      prompt,
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
      kv_transfer_params: first.json.kv_transfer_params,
    }),
  });
  const text = await res.text();
  assert.equal(res.status, 200);
  const usage = text
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)))
    .find((c) => c.usage)?.usage;
  assert.equal(usage.completion_tokens, 5);
  assert.equal(usage.prompt_tokens_details.cached_tokens, 299);
  assert.equal(metric(await scrape(prefill.url), "llmd_sim_kv_blocks_held"), 0);
});

test("a decode pulls only the blocks its prefix cache does not hold", async () => {
  const body = { model: MODEL, messages: messages("again"), max_tokens: 1 };
  const bytes = async () => metric(await scrape(decode.url), "llmd_sim_kv_transfer_bytes_total");
  const before = await bytes();
  let prompt = 0;
  for (const round of [0, 1]) {
    const first = await postLeg(prefill.url, "/v1/chat/completions", {
      ...body,
      kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS,
    });
    prompt = first.json.usage.prompt_tokens;
    await postLeg(decode.url, "/v1/chat/completions", {
      ...body,
      kv_transfer_params: first.json.kv_transfer_params,
    });
    if (round === 0) assert.equal((await bytes()) - before, prompt * 131072);
  }
  const cached = Math.floor((prompt - 1) / 16) * 16;
  assert.equal((await bytes()) - before, (prompt + prompt - cached) * 131072);
  assert.equal(metric(await scrape(prefill.url), "llmd_sim_kv_blocks_held"), 0);
});

test("both legs on /v1/responses", async () => {
  const body = { model: MODEL, input: promptOfTokens(300, "responses") };
  const res = await fetch(`${prefill.url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...body, max_output_tokens: 1, kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS }),
  });
  const first = (await res.json()) as { kv_transfer_params: LegReply["kv_transfer_params"] };
  assert.equal(first.kv_transfer_params.do_remote_prefill, true);
  const decoded = await postLeg(decode.url, "/v1/responses", {
    ...body,
    max_output_tokens: 4,
    kv_transfer_params: first.kv_transfer_params,
  });
  const usage = (
    decoded.json as unknown as {
      usage: { input_tokens: number; input_tokens_details: { cached_tokens: number } };
    }
  ).usage;
  assert.equal(usage.input_tokens_details.cached_tokens, usage.input_tokens - 1);
  assert.equal(metric(await scrape(prefill.url), "llmd_sim_kv_blocks_held"), 0);
});

test("do_remote_decode with stream: true is a 400", async () => {
  const { status, json } = await postLeg(prefill.url, "/v1/chat/completions", {
    model: MODEL,
    messages: messages("stream"),
    max_tokens: 1,
    stream: true,
    kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS,
  });
  assert.equal(status, 400);
  assert.equal(json.error.param, "stream");
});

test("a decode leg without remote fields is a 400 naming the field", async () => {
  const { status, json } = await postLeg(decode.url, "/v1/chat/completions", {
    model: MODEL,
    messages: messages("fields"),
    kv_transfer_params: { do_remote_prefill: true, remote_engine_id: "x", remote_block_ids: [1] },
  });
  assert.equal(status, 400);
  assert.equal(json.error.param, "kv_transfer_params.remote_host");
});

test("roles: a kv_consumer refuses prefill legs, a kv_producer decode legs", async () => {
  const consumer = await startTestSim({ "kv-transfer-config": { ...NIXL, kv_role: "kv_consumer" } });
  const producer = await startTestSim({ "kv-transfer-config": { ...NIXL, kv_role: "kv_producer" } });
  try {
    const body = { model: MODEL, messages: messages("roles"), max_tokens: 1 };
    const refused = await postLeg(consumer.url, "/v1/chat/completions", {
      ...body,
      kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS,
    });
    assert.equal(refused.status, 400);
    const served = await postLeg(producer.url, "/v1/chat/completions", {
      ...body,
      kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS,
    });
    assert.equal(served.status, 200);
    const decodeLeg = await postLeg(producer.url, "/v1/chat/completions", {
      ...body,
      kv_transfer_params: served.json.kv_transfer_params,
    });
    assert.equal(decodeLeg.status, 400);
    assert.equal(decodeLeg.json.error.param, "kv_transfer_params.do_remote_prefill");
    const pulled = await postLeg(decode.url, "/v1/chat/completions", {
      ...body,
      kv_transfer_params: served.json.kv_transfer_params,
    });
    assert.equal(pulled.status, 200);
    assert.equal(metric(await scrape(producer.url), "llmd_sim_kv_blocks_held"), 0);
  } finally {
    await Promise.all([consumer.close(), producer.close()]);
  }
});

test("the transfer configuration is an info gauge; a fresh engine id per start without engine_id", async () => {
  const p = await scrape(prefill.url);
  assert.equal(
    p.get(
      'llmd_sim_kv_transfer_config_info{kv_connector="NixlConnector",kv_role="kv_both",engine_id="prefill-0"}',
    ),
    1,
  );
  const d = [...(await scrape(decode.url)).keys()].find((k) =>
    k.startsWith("llmd_sim_kv_transfer_config_info{"),
  );
  assert.match(d ?? "", /engine_id="[0-9a-f-]{36}"/);
});

test("without --kv-transfer-config, kv_transfer_params are ignored as vLLM ignores them", async () => {
  const plain = await startTestSim();
  try {
    const { status, json } = await postLeg(plain.url, "/v1/chat/completions", {
      model: MODEL,
      messages: messages("plain"),
      max_tokens: 1,
      kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS,
    });
    assert.equal(status, 200);
    assert.equal(json.kv_transfer_params, undefined);
    const s = await waitForMetrics(plain.url, () => true);
    assert.equal(s.has("llmd_sim_kv_transfer_config_info"), false);
  } finally {
    await plain.close();
  }
});
