import assert from "node:assert/strict";
import { test } from "node:test";
import {
  attributeKey,
  ENCODER_CACHE_MATCH_INFO,
  type EncoderCacheMatchInfo,
} from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { SchedulingContext, SchedulingResult } from "../../framework/types.ts";
import { definition, itemsPerEndpoint, type MmEmbeddingsCacheProducer } from "./index.ts";

const make = (params: unknown = {}) =>
  definition.create(
    definition.parameters.parse(params),
    makeEnv(definition.type),
  ) as MmEmbeddingsCacheProducer;
const endpoints = [makeEndpoint("a"), makeEndpoint("b"), makeEndpoint("enc")];
const [a, b, enc] = endpoints as [
  ReturnType<typeof makeEndpoint>,
  ReturnType<typeof makeEndpoint>,
  ReturnType<typeof makeEndpoint>,
];

const image = (url: string) => ({ type: "image_url", image_url: { url } });
const chat = (...parts: unknown[]) => ({
  messages: [{ role: "user", content: [{ type: "text", text: "what is in these?" }, ...parts] }],
});
const picked = (primary: typeof a, extra: Record<string, typeof a> = {}): SchedulingResult => ({
  primaryProfileName: "default",
  profileResults: new Map(
    Object.entries({ default: primary, ...extra }).map(([name, e]) => [
      name,
      { targetEndpoints: [e], scored: [] },
    ]),
  ),
});

function match(ctx: SchedulingContext): Record<string, EncoderCacheMatchInfo> | undefined {
  const map = ctx.state.get(attributeKey(ENCODER_CACHE_MATCH_INFO)) as Map<string, EncoderCacheMatchInfo>;
  return map && Object.fromEntries([...map].map(([k, v]) => [k.split("/")[1], v]));
}

/** One request through produce → preRequest → first token (or not) → complete. */
function serve(p: MmEmbeddingsCacheProducer, body: object, result: SchedulingResult, firstToken = true) {
  const ctx = makeContext({ body: body as Record<string, unknown>, path: "/v1/chat/completions" });
  p.produce(ctx, endpoints);
  const seen = match(ctx);
  p.preRequest(ctx, result);
  if (firstToken) p.onFirstToken(ctx);
  p.onResponseComplete(ctx, a, firstToken ? "natural" : "client-disconnect");
  return seen;
}

test("the endpoint that encoded an image matches it next time; repeats count once", () => {
  const p = make();
  const first = serve(p, chat(image("https://x/cat.png"), image("https://x/cat.png")), picked(a));
  assert.deepEqual(first?.a, { matchedItems: 0, totalItems: 1 });
  const again = serve(p, chat(image("https://x/cat.png"), image("data:image/png;base64,AAAA")), picked(b));
  assert.deepEqual(again?.a, { matchedItems: 1, totalItems: 2 });
  assert.deepEqual(again?.b, { matchedItems: 0, totalItems: 2 });
  assert.equal(p.index.size("default/b"), 2, "b now holds both");
});

test("video and audio parts are items too; a text-only request publishes nothing", () => {
  const p = make();
  const audio = { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } };
  const video = { type: "video_url", video_url: { url: "https://x/clip.mp4" } };
  serve(p, chat(audio, video), picked(a));
  assert.deepEqual(serve(p, chat(audio, video), picked(a))?.a, { matchedItems: 2, totalItems: 2 });
  const other = { type: "input_audio", input_audio: { data: "UklGRg==", format: "mp3" } };
  assert.deepEqual(
    serve(p, chat(other), picked(a))?.a,
    { matchedItems: 0, totalItems: 1 },
    "format is part of the key",
  );
  assert.equal(serve(p, chat(), picked(a)), undefined);
  assert.equal(serve(p, { prompt: "image_url" }, picked(a)), undefined);
});

test("a request that ends before its first token records nothing; the encode profile's pick is recorded", () => {
  const p = make();
  serve(p, chat(image("u1")), picked(a), false);
  assert.equal(p.index.size("default/a"), 0);
  serve(p, chat(image("u1")), picked(a, { encode: enc }));
  assert.equal(p.index.size("default/a"), 1);
  assert.equal(p.index.size("default/enc"), 1);
});

test("bounded per endpoint (cacheSizeInMB / 2 MiB items, oldest out); endpoints that leave are forgotten", () => {
  assert.equal(itemsPerEndpoint(definition.parameters.parse({})), 2048);
  assert.equal(itemsPerEndpoint(definition.parameters.parse({ cacheSizeInMB: 2048 })), 1024);
  assert.equal(itemsPerEndpoint(definition.parameters.parse({ cacheSizeInMBPerServer: 6 })), 3);
  assert.equal(itemsPerEndpoint(definition.parameters.parse({ cacheSizeInMBPerServer: 0 })), 2048);
  const p = make({ cacheSizeInMBPerServer: 4 });
  for (const url of ["u1", "u2", "u3"]) serve(p, chat(image(url)), picked(a));
  assert.equal(p.index.size("default/a"), 2);
  assert.deepEqual(serve(p, chat(image("u1"), image("u3")), picked(b))?.a, {
    matchedItems: 1,
    totalItems: 2,
  });
  p.endpointsChanged([b]);
  assert.equal(p.index.size("default/a"), 0);
  assert.equal(p.index.size("default/b"), 2);
});

test("queries and hits are exported", () => {
  const p = make();
  serve(p, chat(image("u1")), picked(a));
  serve(p, chat(image("u1"), image("u2")), picked(a));
  const values = Object.fromEntries(p.metrics().map((m) => [m.name, m.value()]));
  assert.deepEqual(values, {
    llm_d_router_epp_encoder_cache_queries_total: 3,
    llm_d_router_epp_encoder_cache_hits_total: 1,
  });
});
