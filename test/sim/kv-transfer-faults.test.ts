/**
 * P/D transfer faults between simulators on loopback, each with its defined outcome and no block
 * left held: an injected transfer failure (local prefill fallback, or 503 under
 * `kv_load_failure_policy: fail`), a prefill process killed between the legs, a decode that never
 * pulls (the abort timeout frees the KV), a decode process killed mid-stream, a second pull of the
 * same blocks, and stale transfer metadata after a prefill restart (new engine id, same ports).
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { exitOf, MODEL as PROCESS_MODEL, type SimProcess, spawnSim } from "../router/harness.ts";
import { MODEL, metric, promptOfTokens, scrape, startTestSim, waitForMetrics } from "./helpers.ts";
import { NIXL, postLeg } from "./kv-legs.ts";
import { PREFILL_KV_TRANSFER_PARAMS } from "../../src/disagg/legs.ts";
import { freePort } from "../../src/core/free-port.ts";

const NIXL_JSON = JSON.stringify(NIXL);

const children: SimProcess[] = [];
after(() => {
  for (const c of children) c.child.kill("SIGKILL");
});

async function chat(url: string, model: string, tag: string, extra: Record<string, unknown>) {
  return postLeg(url, "/v1/chat/completions", {
    model,
    messages: [{ role: "user", content: promptOfTokens(400, tag) }],
    ...extra,
  });
}

const prefillLeg = (url: string, model: string, tag: string) =>
  chat(url, model, tag, { max_tokens: 1, kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS });

const decodeLeg = (url: string, model: string, tag: string, params: unknown) =>
  chat(url, model, tag, { max_tokens: 4, kv_transfer_params: params });

async function spawn(args: string[]): Promise<SimProcess> {
  const sim = await spawnSim(["--time-to-first-token", "2ms", "--inter-token-latency", "1ms", ...args]);
  children.push(sim);
  return sim;
}

async function kill(sim: SimProcess): Promise<void> {
  sim.child.kill("SIGKILL");
  await exitOf(sim.child);
}

test("an injected transfer failure falls back to a local prefill; the prefill's KV is released", async () => {
  const prefill = await startTestSim({ "kv-transfer-config": NIXL_JSON });
  const decode = await startTestSim({ "kv-transfer-config": NIXL_JSON, "kv-transfer-failure-rate": 100 });
  try {
    const first = await prefillLeg(prefill.url, MODEL, "inject");
    const second = await decodeLeg(decode.url, MODEL, "inject", first.json.kv_transfer_params);
    assert.equal(second.status, 200);
    assert.equal(second.json.usage.completion_tokens, 4);
    assert.equal(second.json.usage.prompt_tokens_details.cached_tokens, 0);
    const d = await scrape(decode.url);
    assert.equal(d.get('llmd_sim_kv_transfer_failures_total{reason="injected"}'), 1);
    assert.equal(metric(d, "llmd_sim_kv_transfer_fallbacks_total"), 1);
    assert.equal(metric(d, "llmd_sim_kv_transfers_total"), 0);
    assert.equal(metric(await scrape(prefill.url), "llmd_sim_kv_blocks_held"), 0);
  } finally {
    await Promise.all([prefill.close(), decode.close()]);
  }
});

test("under kv_load_failure_policy fail, a failed pull is a 503 kv_transfer_failed", async () => {
  const failing = JSON.stringify({
    kv_connector: "NixlConnector",
    kv_role: "kv_both",
    kv_load_failure_policy: "fail",
  });
  const prefill = await startTestSim({ "kv-transfer-config": NIXL_JSON });
  const decode = await startTestSim({ "kv-transfer-config": failing, "kv-transfer-failure-rate": 100 });
  try {
    const first = await prefillLeg(prefill.url, MODEL, "policy");
    const second = await decodeLeg(decode.url, MODEL, "policy", first.json.kv_transfer_params);
    assert.equal(second.status, 503);
    assert.equal(second.json.error.code, "kv_transfer_failed");
    assert.equal(metric(await scrape(decode.url), "llmd_sim_kv_transfer_fallbacks_total"), 0);
    assert.equal(metric(await scrape(prefill.url), "llmd_sim_kv_blocks_held"), 0);
  } finally {
    await Promise.all([prefill.close(), decode.close()]);
  }
});

test("a second pull of the same blocks is refused and recomputes; a pull for another prompt too", async () => {
  const prefill = await startTestSim({ "kv-transfer-config": NIXL_JSON });
  const decode = await startTestSim({ "kv-transfer-config": NIXL_JSON });
  try {
    const first = await prefillLeg(prefill.url, MODEL, "twice");
    const params = first.json.kv_transfer_params;
    assert.equal(
      (await decodeLeg(decode.url, MODEL, "twice", params)).json.usage.prompt_tokens_details.cached_tokens,
      first.json.usage.prompt_tokens - 1,
    );
    const again = await decodeLeg(decode.url, MODEL, "twice-other", params);
    assert.equal(again.status, 200);
    const other = await prefillLeg(prefill.url, MODEL, "mine");
    const mismatch = await decodeLeg(decode.url, MODEL, "not-mine", other.json.kv_transfer_params);
    assert.equal(mismatch.status, 200);
    const d = await scrape(decode.url);
    assert.equal(d.get('llmd_sim_kv_transfer_failures_total{reason="not_held"}'), 1);
    assert.equal(d.get('llmd_sim_kv_transfer_failures_total{reason="prompt_mismatch"}'), 1);
    assert.equal(metric(d, "llmd_sim_kv_transfer_fallbacks_total"), 2);
    assert.equal(metric(await scrape(prefill.url), "llmd_sim_kv_blocks_held"), 0);
  } finally {
    await Promise.all([prefill.close(), decode.close()]);
  }
});

test("a decode that never pulls: the abort timeout frees the prefill's KV", async () => {
  const prefill = await startTestSim({ "kv-transfer-config": NIXL_JSON, "kv-abort-timeout": "200ms" });
  try {
    const first = await prefillLeg(prefill.url, MODEL, "stranded");
    assert.ok(first.json.kv_transfer_params.remote_block_ids.length > 0);
    const s = await waitForMetrics(prefill.url, (m) => m.get("llmd_sim_kv_blocks_held") === 0, 10_000);
    assert.equal(metric(s, "llmd_sim_kv_blocks_held"), 0);
    assert.equal(metric(s, "llmd_sim_kv_holds_expired_total"), 1);
  } finally {
    await prefill.close();
  }
});

test("a prefill process killed between the legs: the decode recomputes the prefill", async () => {
  const prefill = await spawn(["--kv-transfer-config", NIXL_JSON]);
  const decode = await startTestSim({ model: PROCESS_MODEL, "kv-transfer-config": NIXL_JSON });
  try {
    const first = await prefillLeg(prefill.url, PROCESS_MODEL, "killed");
    assert.equal(first.status, 200);
    await kill(prefill);
    const second = await decodeLeg(decode.url, PROCESS_MODEL, "killed", first.json.kv_transfer_params);
    assert.equal(second.status, 200);
    assert.equal(second.json.usage.prompt_tokens_details.cached_tokens, 0);
    const d = await scrape(decode.url);
    assert.equal(d.get('llmd_sim_kv_transfer_failures_total{reason="unreachable"}'), 1);
    assert.equal(metric(d, "llmd_sim_kv_transfer_fallbacks_total"), 1);
  } finally {
    await decode.close();
  }
});

test("a decode process killed mid-stream leaves no KV held on the prefill", async () => {
  const prefill = await startTestSim({ model: PROCESS_MODEL, "kv-transfer-config": NIXL_JSON });
  const decode = await spawn(["--kv-transfer-config", NIXL_JSON, "--inter-token-latency", "50ms"]);
  try {
    const first = await prefillLeg(prefill.url, PROCESS_MODEL, "mid-stream");
    const res = await fetch(`${decode.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: PROCESS_MODEL,
        messages: [{ role: "user", content: promptOfTokens(400, "mid-stream") }],
        max_tokens: 1000,
        stream: true,
        kv_transfer_params: first.json.kv_transfer_params,
      }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    await kill(decode);
    await assert.rejects(async () => {
      for (;;) if ((await reader.read()).done) throw new Error("the stream ended cleanly");
    });
    const p = await scrape(prefill.url);
    assert.equal(metric(p, "llmd_sim_kv_blocks_held"), 0);
    assert.equal(metric(p, "llmd_sim_kv_holds_pulled_total"), 1);
  } finally {
    await prefill.close();
  }
});

test("stale metadata after a prefill restart: the new engine refuses the pull, the decode recomputes", async () => {
  const port = String(await freePort());
  const sideChannel = String(await freePort());
  const args = ["--kv-transfer-config", NIXL_JSON, "--port", port, "--kv-side-channel-port", sideChannel];
  const before = await spawn(args);
  const decode = await startTestSim({ model: PROCESS_MODEL, "kv-transfer-config": NIXL_JSON });
  try {
    const first = await prefillLeg(before.url, PROCESS_MODEL, "restart");
    await kill(before);
    const restarted = await spawn(args);
    const second = await decodeLeg(decode.url, PROCESS_MODEL, "restart", first.json.kv_transfer_params);
    assert.equal(second.status, 200);
    assert.equal(second.json.usage.prompt_tokens_details.cached_tokens, 0);
    const d = await scrape(decode.url);
    assert.equal(d.get('llmd_sim_kv_transfer_failures_total{reason="stale_engine"}'), 1);
    assert.equal(metric(d, "llmd_sim_kv_transfer_fallbacks_total"), 1);
    const r = await scrape(restarted.url);
    assert.equal(metric(r, "llmd_sim_kv_pulls_refused_total"), 1);
    assert.equal(metric(r, "llmd_sim_kv_blocks_held"), 0);
  } finally {
    await decode.close();
  }
});
