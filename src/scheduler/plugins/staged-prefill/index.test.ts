import assert from "node:assert/strict";
import { test } from "node:test";
import { renderChat } from "../../../api/prompt.ts";
import { STAGED_PREFILL_STATE_KEY, type StagedPrefill } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import type { PreRequest, SchedulingResult } from "../../framework/types.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { instantiate, resultFor } from "../testing.ts";
import { definition, messageCuts, stageCuts } from "./index.ts";

const a = makeEndpoint("a");
const b = makeEndpoint("b");

test("cuts every stageTokens new tokens after the cached ones, aligned to 256, leaving the request half a stage", () => {
  assert.deepEqual(stageCuts(50_000, 0, 16_384), [16_384, 32_768]);
  assert.deepEqual(stageCuts(41_000, 0, 16_384), [16_384, 32_768]);
  assert.deepEqual(stageCuts(40_000, 0, 16_384), [16_384]);
  assert.deepEqual(stageCuts(60_000, 1_000, 16_384), [17_152, 33_536, 49_920]);
  assert.deepEqual(stageCuts(20_000, 0, 16_384), []);
});

/** Plans for a prompt of `length` exact tokens on `a`, with `queued` other tokens in flight there. */
function plan(
  length: number,
  uncached: number,
  options: { queued?: number; exact?: boolean; result?: SchedulingResult; kvUsage?: number } = {},
): StagedPrefill | undefined {
  const planner = instantiate<PreRequest>(definition, { stageTokens: 16_384, minUncachedTokens: 24_576 });
  const ctx = makeContext({ tokens: new Uint32Array(length), exactTokens: options.exact ?? true });
  const load = { requests: 0, tokens: options.queued ?? 0, requestUncachedTokens: uncached };
  ctx.state.set(inFlightStateKey("inflight-load-producer"), new Map([[a.metadata.key, load]]));
  a.metrics.kvCacheUsagePercent = options.kvUsage ?? 0.5;
  planner.preRequest(ctx, options.result ?? resultFor(a));
  return ctx.state.get(STAGED_PREFILL_STATE_KEY) as StagedPrefill | undefined;
}

test("a long cold prompt with exact tokens on an endpoint with nothing else to prefill is staged", () => {
  assert.deepEqual(plan(50_000, 50_000)?.cuts, [16_384, 32_768]);
  assert.deepEqual(plan(50_000, 30_000)?.cuts, [36_352], "cuts start after the cached prefix");
});

test("a completions prompt of text is staged by the router's estimate of its tokens", () => {
  const planner = instantiate<PreRequest>(definition, { stageTokens: 16_384, minUncachedTokens: 24_576 });
  const ctx = makeContext({ body: { prompt: "x" }, promptText: "word ".repeat(10_000) });
  const load = { requests: 0, tokens: 0, requestUncachedTokens: 12_500 };
  ctx.state.set(inFlightStateKey("inflight-load-producer"), new Map([[a.metadata.key, load]]));
  a.metrics.kvCacheUsagePercent = 0;
  planner.preRequest(ctx, resultFor(a));
  assert.equal(ctx.state.get(STAGED_PREFILL_STATE_KEY), undefined, "12,500 estimated tokens: too short");
  const long = makeContext({ body: { prompt: "x" }, promptText: "word ".repeat(40_000) });
  long.state.set(
    inFlightStateKey("inflight-load-producer"),
    new Map([[a.metadata.key, { ...load, requestUncachedTokens: 50_000 }]]),
  );
  planner.preRequest(long, resultFor(a));
  assert.deepEqual(long.state.get(STAGED_PREFILL_STATE_KEY), {
    cuts: [16_384, 32_768],
    promptTokens: 50_000,
    cachedTokens: 0,
  });
});

test("nothing is staged for estimated ids of a prompt that is not text, a short uncached part, a busy or KV-short endpoint, or two targets", () => {
  assert.equal(plan(50_000, 50_000, { exact: false }), undefined);
  assert.equal(plan(50_000, 20_000), undefined);
  assert.equal(plan(50_000, 50_000, { queued: 1 }), undefined);
  assert.equal(plan(50_000, 50_000, { kvUsage: 0.75 }), undefined);
  assert.ok(plan(50_000, 50_000, { kvUsage: 0.74 }));
  const pd: SchedulingResult = {
    primaryProfileName: "decode",
    profileResults: new Map([
      ["prefill", { targetEndpoints: [b], scored: [] }],
      ["decode", { targetEndpoints: [a], scored: [] }],
    ]),
  };
  assert.equal(plan(50_000, 50_000, { result: pd }), undefined);
});

test("a chat's cuts move down to the end of a message, never past the last but one", () => {
  const message = (role: string, chars: number) => ({ role, content: "x".repeat(chars) });
  // Rendered: 10,009, 20,014 and 30,009 code units end messages 1, 2 and 3 (headers and ends).
  const messages = [message("system", 9_999), message("user", 9_997), message("assistant", 9_981)];
  const total = 30_009 + "<|assistant|>\n".length;
  const tokensAt = (units: number) => Math.floor((units / total) * 7_506);
  assert.deepEqual(messageCuts(messages, [3_000, 5_500, 7_000], 7_506, 0), {
    cuts: [tokensAt(10_009), tokensAt(20_014)],
    messages: [1, 2],
  });
  assert.deepEqual(
    messageCuts(messages, [2_000], 7_506, 0),
    { cuts: [], messages: [] },
    "no message ends below",
  );
  assert.deepEqual(messageCuts(messages, [5_500], 7_506, 3_000), { cuts: [tokensAt(20_014)], messages: [2] });
});

test("a chat of several messages is staged after its messages; one of a single message is not", () => {
  const planner = instantiate<PreRequest>(definition, { stageTokens: 16_384, minUncachedTokens: 24_576 });
  const chat = (messages: { role: string; content: string }[]) => {
    const ctx = makeContext({
      path: "/v1/chat/completions",
      body: { messages },
      promptText: renderChat(messages),
    });
    const load = { requests: 0, tokens: 0, requestUncachedTokens: 50_000 };
    ctx.state.set(inFlightStateKey("inflight-load-producer"), new Map([[a.metadata.key, load]]));
    a.metrics.kvCacheUsagePercent = 0;
    planner.preRequest(ctx, resultFor(a));
    return ctx.state.get(STAGED_PREFILL_STATE_KEY) as StagedPrefill | undefined;
  };
  const turns = Array.from({ length: 10 }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: "y".repeat(19_990),
  }));
  const staged = chat(turns);
  assert.deepEqual(staged?.messages, [3, 6]);
  assert.equal(staged?.cuts.length, 2);
  assert.ok(staged!.cuts[0]! <= 16_384 && staged!.cuts[1]! <= 32_768, `${staged?.cuts}`);
  assert.equal(chat([{ role: "user", content: "y".repeat(200_000) }]), undefined);
});
