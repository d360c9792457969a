import assert from "node:assert/strict";
import { test } from "node:test";
import { ROLE_LABEL } from "../../../endpoints/endpoint.ts";
import { RESPONSE_HEADERS_STATE_KEY, UPSTREAM_HEADERS_STATE_KEY } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import {
  DS_ROLE_LABEL,
  definition,
  REVISION_HEADER,
  REVISION_LABEL,
  type RolloutScreener,
  rolesOf,
} from "./index.ts";

let port = 9000;
/** An endpoint of `revision` with `llm-d.ai/role: role` (and any extra labels). */
const pod = (revision: string | undefined, role: string, extra: Record<string, string> = {}) =>
  makeEndpoint(`${revision ?? "none"}-${role}-${port}`, {
    port: port++,
    labels: { [ROLE_LABEL]: role, ...(revision ? { [REVISION_LABEL]: revision } : {}), ...extra },
  });

function screener(params: unknown = {}, draw = 0): RolloutScreener {
  return definition.create(definition.parameters.parse(params), {
    ...makeEnv("screener"),
    random: () => draw,
  }) as RolloutScreener;
}

const revisions = (endpoints: readonly { metadata: { labels: Record<string, string> } }[]) =>
  [...new Set(endpoints.map((e) => e.metadata.labels[REVISION_LABEL] ?? "-"))].sort();

test("one revision per request: the other revision's prefill and decode are screened out", () => {
  const pool = [pod("old", "prefill"), pod("old", "decode"), pod("new", "prefill"), pod("new", "decode")];
  const first = screener({}, 0).screen(makeContext(), pool);
  assert.deepEqual(revisions(first), ["old"]);
  assert.equal(first.length, 2);
  assert.deepEqual(revisions(screener({}, 0.99).screen(makeContext(), pool)), ["new"]);
});

test("max-role weighting: a revision's weight is its largest required role's ready endpoints", () => {
  // old: 1 prefill, 3 decode → weight 3; new: 1 prefill, 1 decode → weight 1; total 4.
  const pool = [
    pod("old", "prefill"),
    ...[1, 2, 3].map(() => pod("old", "decode")),
    pod("new", "prefill"),
    pod("new", "decode"),
  ];
  assert.deepEqual(revisions(screener({}, 0.74).screen(makeContext(), pool)), ["old"]);
  assert.deepEqual(revisions(screener({}, 0.76).screen(makeContext(), pool)), ["new"]);
});

test("a revision without a ready prefill or decode is not eligible", () => {
  const pool = [pod("old", "prefill"), pod("old", "decode"), pod("new", "prefill")];
  for (const draw of [0, 0.5, 0.99])
    assert.deepEqual(revisions(screener({}, draw).screen(makeContext(), pool)), ["old"]);
});

test("`both` serves both roles; the DisaggregatedSet role label wins over llm-d.ai/role", () => {
  assert.deepEqual(rolesOf(pod("r", "both")), ["prefill", "decode"]);
  assert.deepEqual(rolesOf(pod("r", "decode", { [DS_ROLE_LABEL]: "prefill" })), ["prefill"]);
  assert.deepEqual(rolesOf(makeEndpoint("bare")), []);
  const pool = [pod("old", "prefill"), pod("new", "both")];
  assert.deepEqual(revisions(screener({}, 0).screen(makeContext(), pool)), ["new"]);
});

test("out-of-scope endpoints pass untouched; no eligible revision screens nothing and stamps nothing", () => {
  const plain = pod(undefined, "decode");
  const other = pod("old", "decode", { app: "other" });
  const pool = [pod("old", "prefill", { app: "ds" }), pod("old", "decode", { app: "ds" }), other, plain];
  const scoped = screener({ scope: { labelSelector: { matchLabels: { app: "ds" } } } }, 0);
  assert.deepEqual(scoped.screen(makeContext(), pool), pool);

  const lonely = [pod("old", "prefill"), pod("new", "decode")];
  const s = screener();
  const ctx = makeContext();
  assert.deepEqual(s.screen(ctx, lonely), lonely);
  s.preRequest(ctx);
  assert.equal(ctx.state.get(UPSTREAM_HEADERS_STATE_KEY), undefined);
});

test("the chosen revision is stamped upstream and on the response as x-disagg-revision", () => {
  const s = screener({}, 0.99);
  const ctx = makeContext();
  s.screen(ctx, [pod("old", "prefill"), pod("old", "decode"), pod("new", "both")]);
  s.preRequest(ctx);
  for (const key of [UPSTREAM_HEADERS_STATE_KEY, RESPONSE_HEADERS_STATE_KEY])
    assert.equal((ctx.state.get(key) as Map<string, string>).get(REVISION_HEADER), "new");
});

test("header selectors: strict keeps only matching endpoints, prefer falls back to all", () => {
  const SLICE = "disaggregatedset.x-k8s.io/slice";
  const pool = [
    pod("r", "prefill", { [SLICE]: "0" }),
    pod("r", "decode", { [SLICE]: "0" }),
    pod("r", "prefill", { [SLICE]: "1" }),
    pod("r", "decode", { [SLICE]: "1" }),
  ];
  const selector = (mode: string) => ({
    headerSelectors: [{ name: "slice", headerName: "X-Disagg-Slice", labelKey: SLICE, mode }],
  });
  const slices = (out: readonly { metadata: { labels: Record<string, string> } }[]) =>
    out.map((e) => e.metadata.labels[SLICE]);
  const ask = (slice: string) => makeContext({ headers: { "x-disagg-slice": slice } });
  assert.deepEqual(slices(screener(selector("strict")).screen(ask("1"), pool)), ["1", "1"]);
  assert.deepEqual(
    screener(selector("strict")).screen(ask("9"), pool),
    pool,
    "no slice 9: no eligible revision, fail open",
  );
  assert.deepEqual(slices(screener(selector("prefer")).screen(ask("9"), pool)), ["0", "0", "1", "1"]);
  assert.deepEqual(screener(selector("strict")).screen(makeContext(), pool), pool, "no header: no narrowing");
});

test("parameters are strict: unknown fields and empty requireRoles fail", () => {
  assert.equal(definition.parameters.safeParse({ revisionLabel: "x" }).success, false);
  assert.equal(
    definition.parameters.safeParse({ revisionGating: { requireRoles: { values: [] } } }).success,
    false,
  );
  assert.equal(definition.parameters.safeParse({ revisionGating: { mode: "min-role" } }).success, false);
});
