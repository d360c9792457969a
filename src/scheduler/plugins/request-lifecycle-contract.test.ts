/**
 * The in-flight accounting contract of every registered plugin that pairs `preRequest` with
 * `onResponseComplete` (producers, filters, saturation detectors alike): each request that reached
 * preRequest and then completed exactly once — whatever the termination cause, with or without a
 * first token, in any interleaving — leaves the plugin as it started (no leak); a completion
 * without preRequest and a second completion of the same request change nothing. The state is
 * read the way consumers read it: a fresh request's produce output, filter output, scores, and
 * pool saturation.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { builtinDefinitions, createSample } from "../../config/testing.ts";
import { type Endpoint, ROLE_LABEL } from "../../endpoints/endpoint.ts";
import { isDataProducer, isFilter, isPreRequest, isResponseHooks, isScorer } from "../framework/guards.ts";
import { makeContext, makeEndpoint, seededRandom } from "../framework/testing.ts";
import type {
  PreRequest,
  ResponseHooks,
  SchedulingContext,
  SchedulingResult,
  TerminationCause,
} from "../framework/types.ts";
import type { Plugin } from "../../plugin/types.ts";

type Tracked = PreRequest & ResponseHooks;

/** Every request belongs to one session, so per-session state (session-state-producer) shows too. */
const SESSION = { "x-session-id": "contract-session" };

const CAUSES: readonly TerminationCause[] = ["natural", "client-disconnect", "error", "evicted", "timeout"];

/** Parameters that switch on, or widen, the per-request state a plugin keeps. */
const STATEFUL_PARAMS: Record<string, unknown> = {
  "priority-headroom-filter": { packHighPriority: true, shieldMaxInFlightRequests: 1 },
  "inflight-load-producer": { addEstimatedOutputTokens: true },
  "concurrency-detector": { concurrencyMode: "hybrid", maxTokenConcurrency: 1000 },
};

/**
 * Types that keep no per-request state with their sample parameters (nothing in flight shows).
 * no-hit-lru-scorer hooks completions only for `coldPlacement: footprint`, whose session
 * footprints outlive a request on purpose (for `footprintIdleSeconds`, its own unit test).
 * mm-embeddings-cache-producer keeps a request's pending items in its context only; the encoder
 * cache it records outlives the request on purpose (its own unit test).
 */
const STATELESS_BY_DEFAULT = new Set([
  "priority-headroom-filter",
  "no-hit-lru-scorer",
  "mm-embeddings-cache-producer",
]);

const isTracked = (p: Plugin): p is Plugin & Tracked =>
  isPreRequest(p) && isResponseHooks(p) && typeof (p as ResponseHooks).onResponseComplete === "function";

interface Variant {
  label: string;
  /** Requests in flight must show in what later requests observe. */
  showsState: boolean;
  make(): Plugin & Tracked;
}

const variants: Variant[] = builtinDefinitions()
  .filter((d) => isTracked(createSample(d.type)))
  .flatMap(({ type }) => {
    const sample: Variant = {
      label: type,
      showsState: !STATELESS_BY_DEFAULT.has(type),
      make: () => createSample(type) as Plugin & Tracked,
    };
    const params = STATEFUL_PARAMS[type];
    if (params === undefined) return [sample];
    const stateful: Variant = {
      label: `${type} ${JSON.stringify(params)}`,
      showsState: true,
      make: () => createSample(type, { params }) as Plugin & Tracked,
    };
    return [sample, stateful];
  });

const ENDPOINTS: Endpoint[] = [undefined, "prefill", "decode", "prefill-decode"].map((role, i) =>
  makeEndpoint(`e${i}`, {
    labels: role ? { [ROLE_LABEL]: role } : {},
    metrics: { cacheBlockSize: 16, cacheNumBlocks: 1000 },
  }),
);

type Saturation = {
  saturation(e: readonly Endpoint[], now: number): number;
  endpointSaturated(e: Endpoint, now: number): boolean;
};
const isDetector = (p: Plugin): p is Plugin & Saturation =>
  typeof (p as Partial<Saturation>).saturation === "function" &&
  typeof (p as Partial<Saturation>).endpointSaturated === "function";

/** Everything a later request can see of the plugin's state, as JSON. */
/**
 * Fields that record a session's history by design (session-state-producer): they grow with every
 * request, so the no-leak check reads only what is in flight.
 */
const HISTORY_FIELDS = new Set([
  "turnsTaken",
  "completedRequests",
  "totalInputTokens",
  "totalOutputTokens",
  "durationMs",
  "lastSeenAt",
]);

function inFlightView(value: unknown): unknown {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !HISTORY_FIELDS.has(key)));
}

function observe(plugin: Plugin): string {
  const seen: unknown[] = [];
  for (const priority of [0, 10]) {
    const ctx = makeContext({
      requestId: `probe-${priority}`,
      promptText: "probe ".repeat(20),
      priority,
      headers: SESSION,
    });
    const endpoints = ENDPOINTS.map((e) => ({ ...e, attributes: new Map<string, unknown>() }));
    if (isDataProducer(plugin)) {
      void plugin.produce(ctx, endpoints);
      seen.push([...ctx.state].map(([k, v]) => [k, v instanceof Map ? [...v] : inFlightView(v)]));
    }
    if (isFilter(plugin)) seen.push(plugin.filter(ctx, endpoints).map((e) => e.metadata.key));
    if (isScorer(plugin)) seen.push(Array.from(plugin.score(ctx, endpoints)));
    if (isDetector(plugin))
      seen.push([plugin.saturation(endpoints, 0), endpoints.map((e) => plugin.endpointSaturated(e, 0))]);
  }
  return JSON.stringify(seen);
}

interface Open {
  ctx: SchedulingContext;
  target: Endpoint;
}

/** One request up to dispatch: produce (for producers), then preRequest of a one- or two-profile decision. */
function dispatch(plugin: Plugin & Tracked, id: string, rand: () => number): Open {
  const ctx = makeContext({
    requestId: id,
    promptText: `request ${id} `.repeat(1 + Math.floor(rand() * 30)),
    priority: rand() < 0.5 ? 0 : 2,
    body: { max_tokens: 1 + Math.floor(rand() * 50) },
    headers: SESSION,
  });
  if (isDataProducer(plugin)) void plugin.produce(ctx, ENDPOINTS);
  const pick = () => ENDPOINTS[Math.floor(rand() * ENDPOINTS.length)]!;
  const target = pick();
  const result: SchedulingResult =
    rand() < 0.5
      ? {
          primaryProfileName: "default",
          profileResults: new Map([["default", { targetEndpoints: [target], scored: [] }]]),
        }
      : {
          primaryProfileName: "decode",
          profileResults: new Map([
            ["prefill", { targetEndpoints: [pick()], scored: [] }],
            ["decode", { targetEndpoints: [target], scored: [] }],
          ]),
        };
  plugin.preRequest(ctx, result);
  if (rand() < 0.5) plugin.onFirstToken?.(ctx, target);
  return { ctx, target };
}

const complete = (plugin: Tracked, { ctx, target }: Open, cause: TerminationCause) =>
  plugin.onResponseComplete!(ctx, target, cause, { promptTokens: 10, completionTokens: 5, cachedTokens: 0 });

describe("request lifecycle contract", () => {
  for (const { label, showsState, make } of variants) {
    test(`${label}: one request per termination cause leaves no trace`, () => {
      const rand = seededRandom(3);
      for (const cause of CAUSES) {
        for (let k = 0; k < 4; k++) {
          const plugin = make();
          const baseline = observe(plugin);
          complete(plugin, dispatch(plugin, `${cause}-${k}`, rand), cause);
          assert.equal(observe(plugin), baseline, `after one ${cause} request`);
        }
      }
    });

    test(`${label}: interleaved requests, stray and repeated completions`, () => {
      for (const seed of [1, 2, 3]) {
        const rand = seededRandom(seed);
        const plugin = make();
        const baseline = observe(plugin);
        const open: Open[] = [];
        let changed = false;
        for (let step = 0; step < 120; step++) {
          const op = rand();
          if (op < 0.5 || open.length === 0) open.push(dispatch(plugin, `r${seed}-${step}`, rand));
          else {
            const done = open.splice(Math.floor(rand() * open.length), 1)[0]!;
            complete(plugin, done, CAUSES[step % CAUSES.length]!);
            const after = observe(plugin);
            complete(plugin, done, "natural");
            assert.equal(observe(plugin), after, `seed ${seed}: a second completion changed the state`);
          }
          const before = observe(plugin);
          if (before !== baseline) changed = true;
          if (op > 0.9) {
            const stray = {
              ctx: makeContext({ requestId: `stray-${step}`, priority: 2, headers: SESSION }),
              target: ENDPOINTS[2]!,
            };
            complete(plugin, stray, CAUSES[step % CAUSES.length]!);
            assert.equal(
              observe(plugin),
              before,
              `seed ${seed}: a completion without preRequest changed the state`,
            );
          }
        }
        if (showsState) assert.ok(changed, `seed ${seed}: requests in flight never showed`);
        for (const [i, done] of open.entries()) complete(plugin, done, CAUSES[i % CAUSES.length]!);
        assert.equal(observe(plugin), baseline, `seed ${seed}: state leaked after every request ended`);
      }
    });
  }
});

test("the contract covers every plugin that counts requests in flight", () => {
  const types = new Set(variants.map((v) => v.label.split(" ")[0]));
  for (const type of ["inflight-load-producer", "priority-headroom-filter", "concurrency-detector"])
    assert.ok(types.has(type), type);
});
