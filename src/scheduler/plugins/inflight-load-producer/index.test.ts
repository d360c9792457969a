import assert from "node:assert/strict";
import { test } from "node:test";
import { ROLE_LABEL } from "../../../endpoints/endpoint.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import type { ResponseHooks, TerminationCause } from "../../framework/types.ts";
import {
  type ApproxPrefixCacheProducer,
  definition as prefixDefinition,
} from "../approx-prefix-cache-producer/index.ts";
import { readEndpointLoad } from "../shared/inflight-load.ts";
import { instantiate, resultFor } from "../testing.ts";
import { definition, type InFlightLoadProducer } from "./index.ts";

const [a, b] = [makeEndpoint("a"), makeEndpoint("b")];
const prefill = makeEndpoint("p", { labels: { [ROLE_LABEL]: "prefill" } });
const prompt = (tokens: number) => "t".repeat(tokens * 4);

function dispatch(producer: InFlightLoadProducer, tokens: number, to = a, body = {}) {
  const ctx = makeContext({ promptText: prompt(tokens), body });
  producer.produce(ctx, [a, b, prefill]);
  producer.preRequest(ctx, resultFor(to));
  return ctx;
}

test("prompt tokens release at first token, the request at the end", () => {
  const producer = instantiate<InFlightLoadProducer>(definition);
  const ctx = dispatch(producer, 100);
  assert.deepEqual(producer.load("default/a"), { requests: 1, tokens: 100 });
  producer.onFirstToken(ctx);
  assert.deepEqual(producer.load("default/a"), { requests: 1, tokens: 0 });
  producer.onResponseComplete(ctx);
  assert.deepEqual(producer.totals(), { requests: 0, tokens: 0, openRequests: 0 });
});

test("a prefill endpoint drops the request at its first token", () => {
  const producer = instantiate<InFlightLoadProducer>(definition);
  const ctx = dispatch(producer, 10, prefill);
  producer.onFirstToken(ctx);
  assert.deepEqual(producer.load("default/p"), { requests: 0, tokens: 0 });
  producer.onResponseComplete(ctx);
  assert.deepEqual(producer.totals(), { requests: 0, tokens: 0, openRequests: 0 });
});

test("only uncached prompt tokens count; the snapshot carries this request's own", () => {
  const prefix = instantiate<ApproxPrefixCacheProducer>(prefixDefinition);
  const producer = instantiate<InFlightLoadProducer>(definition);
  const run = (text: string) => {
    const ctx = makeContext({ promptText: text });
    prefix.produce(ctx, [a, b]);
    producer.produce(ctx, [a, b]);
    prefix.preRequest(ctx, resultFor(a));
    producer.preRequest(ctx, resultFor(a));
    return ctx;
  };
  run(prompt(640)); // 10 blocks of 64 now cached on a (optimistically)
  const second = run(prompt(640) + prompt(100));
  assert.equal(readEndpointLoad(second.state, producer.stateKey, "default/a").requestUncachedTokens, 100);
  assert.equal(readEndpointLoad(second.state, producer.stateKey, "default/b").requestUncachedTokens, 740);
  assert.equal(readEndpointLoad(second.state, producer.stateKey, "default/a").tokens, 640);
  assert.deepEqual(producer.load("default/a"), { requests: 2, tokens: 740 });
});

test("estimated output tokens: ratio × prompt, capped by max_tokens and maxEstimatedOutputTokens", () => {
  const producer = instantiate<InFlightLoadProducer>(definition, {
    addEstimatedOutputTokens: true,
    maxEstimatedOutputTokens: 120,
  });
  const ctx = dispatch(producer, 40); // 40 prompt + 60 estimated
  assert.equal(producer.load("default/a").tokens, 100);
  producer.onFirstToken(ctx);
  assert.equal(producer.load("default/a").tokens, 60, "output estimate stays until the end");
  dispatch(producer, 100, b, { max_tokens: 7 });
  assert.equal(producer.load("default/b").tokens, 107);
  dispatch(producer, 1000, b);
  assert.equal(producer.load("default/b").tokens, 107 + 1000 + 120);
});

test("N random lifecycles with random exit paths return every counter to zero", () => {
  const producer = instantiate<InFlightLoadProducer>(definition, { addEstimatedOutputTokens: true });
  const causes: TerminationCause[] = ["natural", "client-disconnect", "error", "evicted", "timeout"];
  let seed = 42;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const live: ReturnType<typeof dispatch>[] = [];
  let peak = 0;
  for (let step = 0; step < 5000; step++) {
    if (live.length === 0 || rand() < 0.55) {
      live.push(dispatch(producer, 1 + Math.floor(rand() * 500), [a, b, prefill][Math.floor(rand() * 3)]));
      peak = Math.max(peak, producer.totals().requests);
      continue;
    }
    const ctx = live.splice(Math.floor(rand() * live.length), 1)[0]!;
    if (rand() < 0.6) producer.onFirstToken(ctx);
    if (rand() < 0.2) producer.onFirstToken(ctx); // duplicated signal
    const cause = causes[Math.floor(rand() * causes.length)]!;
    (producer as ResponseHooks).onResponseComplete?.(ctx, a, cause, undefined);
    if (rand() < 0.1) (producer as ResponseHooks).onResponseComplete?.(ctx, a, "error", undefined); // duplicated end
  }
  assert.ok(peak > 10, `peak in flight ${peak}`);
  for (const ctx of live) (producer as ResponseHooks).onResponseComplete?.(ctx, b, "timeout", undefined);
  assert.deepEqual(producer.totals(), { requests: 0, tokens: 0, openRequests: 0 });
});
