/**
 * The contract every registered data producer must honour, run against each built-in one: produce
 * accepts an empty endpoint list, never changes an endpoint's metadata or metrics, publishes
 * something for a request that carries what it reads, and gives the same output for the same
 * inputs (also when run twice for one request). A producer that is also a PreRequest leaves its
 * state unchanged for a decision that picked nothing, and recording one decision twice equals once.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { builtinDefinitions, createSample } from "../../config/testing.ts";
import { type Endpoint, ROLE_LABEL } from "../../endpoints/endpoint.ts";
import { isDataProducer, isPreRequest } from "../framework/guards.ts";
import { makeContext, makeEndpoint, seededRandom } from "../framework/testing.ts";
import type {
  DataProducer,
  PreRequest,
  SchedulingContext,
  SchedulingRequest,
  SchedulingResult,
} from "../framework/types.ts";

const producerTypes = builtinDefinitions()
  .map((d) => d.type)
  .filter((type) => isDataProducer(createSample(type)));

/** A JSON form of anything producers publish (maps, typed arrays, objects with sorted keys). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Map) return { map: [...v.entries()].sort(([a], [b]) => String(a).localeCompare(b)) };
    if (v instanceof Set) return { set: [...v].sort() };
    if (ArrayBuffer.isView(v)) return { typed: Array.from(v as unknown as ArrayLike<number>) };
    return v;
  });
}

function endpoints(seed: number, n: number): Endpoint[] {
  const rand = seededRandom(seed);
  const roles = [undefined, "decode", "prefill"];
  return Array.from({ length: n }, (_, i) => {
    const role = roles[Math.floor(rand() * roles.length)];
    return makeEndpoint(`e${i}`, {
      labels: role ? { [ROLE_LABEL]: role } : {},
      metrics: {
        waitingQueueSize: Math.floor(rand() * 5),
        cacheBlockSize: 16,
        cacheNumBlocks: 500 + Math.floor(rand() * 500),
      },
    });
  });
}

/** Requests carrying what producers read: prompt text, chat body, token ids, a session header. */
const REQUESTS: Partial<SchedulingRequest>[] = [
  { promptText: "" },
  { promptText: "a shared system prompt ".repeat(40), headers: { "x-session-id": "s1" } },
  {
    path: "/v1/chat/completions",
    promptText: "hello there",
    body: { messages: [{ role: "user", content: "hello there" }], max_tokens: 8 },
  },
  { promptText: "token ids given", tokens: Uint32Array.from({ length: 300 }, (_, i) => i % 97) },
  {
    path: "/v1/chat/completions",
    promptText: "what is this?",
    body: {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
          ],
        },
      ],
    },
  },
];

/** The request whose decision a PreRequest producer records: the session one, unless it reads something else. */
const decisionRequest = (type: string) =>
  type === "mm-embeddings-cache-producer" ? REQUESTS[4]! : REQUESTS[1]!;

const contextFor = (request: Partial<SchedulingRequest>) =>
  makeContext({ ...request, headers: { ...request.headers }, attributes: new Map() });

/** What a producer left for the request: cycle state, tokens, request and endpoint attributes. */
const published = (ctx: SchedulingContext, list: readonly Endpoint[]) =>
  canonical({
    state: ctx.state,
    tokens: ctx.request.tokens,
    attributes: ctx.request.attributes,
    endpoints: list.map((e) => e.attributes),
  });

const identity = (list: readonly Endpoint[]) => canonical(list.map((e) => [e.metadata, e.metrics]));

async function produce(producer: DataProducer, ctx: SchedulingContext, list: readonly Endpoint[]) {
  await producer.produce(ctx, list);
  return published(ctx, list);
}

/** What a fresh probe request sees from `producer` on `list` (its state, as consumers read it). */
async function probe(producer: DataProducer, list: readonly Endpoint[]): Promise<string> {
  const fresh = list.map((e) => ({ ...e, attributes: new Map<string, unknown>() }));
  return produce(producer, contextFor(REQUESTS[1]!), fresh);
}

const decision = (targets: Endpoint[]): SchedulingResult => ({
  primaryProfileName: "default",
  profileResults: new Map([
    ["default", targets.length > 0 ? { targetEndpoints: targets, scored: [] } : null],
  ]),
});

describe("data producer contract", () => {
  for (const type of producerTypes) {
    test(`${type}: produce accepts an empty endpoint list`, async () => {
      for (const request of REQUESTS) {
        const producer = createSample(type) as DataProducer;
        await assert.doesNotReject(async () => producer.produce(contextFor(request), []));
      }
    });

    test(`${type}: endpoints untouched, output published and deterministic`, async () => {
      let publishedSomething = false;
      for (const [i, request] of REQUESTS.entries()) {
        for (const n of [1, 3, 6]) {
          const list = endpoints(31 * i + n, n);
          const before = identity(list);
          const ctx = contextFor(request);
          const empty = published(ctx, list);
          const first = await produce(createSample(type) as DataProducer, ctx, list);
          assert.equal(identity(list), before, "endpoint metadata and metrics unchanged");
          if (first !== empty) publishedSomething = true;
          const again = await produce(
            createSample(type) as DataProducer,
            contextFor(request),
            endpoints(31 * i + n, n),
          );
          assert.equal(again, first, "same inputs, same output");
          const producer = createSample(type) as DataProducer;
          const repeatCtx = contextFor(request);
          const once = await produce(producer, repeatCtx, list);
          assert.equal(
            await produce(producer, repeatCtx, list),
            once,
            "a repeated produce publishes the same",
          );
        }
      }
      assert.ok(publishedSomething, "never published anything");
    });

    if (!isPreRequest(createSample(type))) continue;
    test(`${type}: preRequest ignores an empty decision and records a decision once`, async () => {
      const producer = createSample(type) as DataProducer;
      const list = endpoints(7, 4);
      const baseline = await probe(producer, list);
      const ctx = contextFor(decisionRequest(type));
      await producer.produce(ctx, list);
      (producer as DataProducer & PreRequest).preRequest(ctx, decision([]));
      assert.equal(await probe(producer, list), baseline, "an empty decision changes nothing");

      /** The request's own state after recording the decision `times` times, and what a later one sees. */
      const record = async (times: number) => {
        const p = createSample(type) as DataProducer & PreRequest;
        const c = contextFor(decisionRequest(type));
        await p.produce(c, list);
        for (let k = 0; k < times; k++) p.preRequest(c, decision([list[1]!]));
        return published(c, list) + (await probe(p, list));
      };
      const recorded = await record(1);
      assert.notEqual(recorded, await record(0), "a recorded decision is visible");
      assert.equal(await record(2), recorded, "recording a decision twice equals once");
    });
  }
});

test("the contract covers every data producer kind", () => {
  for (const type of ["token-producer", "approx-prefix-cache-producer", "inflight-load-producer"])
    assert.ok(producerTypes.includes(type), type);
});
