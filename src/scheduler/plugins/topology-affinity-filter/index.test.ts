import assert from "node:assert/strict";
import { test } from "node:test";
import { createSample } from "../../../config/testing.ts";
import { PEER_ENDPOINT_ATTRIBUTE } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import type { DataProducer, Filter, Scorer } from "../../framework/types.ts";
import { REGION_LABEL, ZONE_LABEL } from "../topology-extractor/index.ts";

/** Endpoints on hosts (label `host`) in zones/regions; `decode` is the peer on host h1, zone z1. */
const at = (name: string, host?: string, zone?: string, region = "r1") =>
  makeEndpoint(name, {
    labels: { ...(host ? { host } : {}), ...(zone ? { [ZONE_LABEL]: zone } : {}), [REGION_LABEL]: region },
  });
const peer = at("decode", "h1", "z1");
const POOL = [
  peer,
  at("same-host", "h1", "z1"),
  at("same-zone", "h2", "z1"),
  at("same-region", "h3", "z2"),
  at("far", "h4", "z9", "r9"),
  at("nohost"),
];

function contextWith(peerEndpoint = peer, params = { hostnameLabel: "host" }) {
  const ctx = makeContext();
  const extractor = createSample("topology-extractor", { params }) as DataProducer;
  void extractor.produce(ctx, POOL);
  ctx.request.attributes.set(PEER_ENDPOINT_ATTRIBUTE, peerEndpoint);
  return ctx;
}

const names = (list: readonly { metadata: { name: string } }[]) => list.map((e) => e.metadata.name);
const candidates = POOL.slice(1);

const FILTER_CASES = [
  { minAffinity: "host", want: ["same-host"] },
  { minAffinity: "rack", want: ["same-host"] },
  { minAffinity: "zone", want: ["same-host", "same-zone"] },
  { minAffinity: "region", want: ["same-host", "same-zone", "same-region", "nohost"] },
];

for (const c of FILTER_CASES) {
  test(`topology-affinity-filter minAffinity ${c.minAffinity} keeps ${c.want}`, () => {
    const filter = createSample("topology-affinity-filter", {
      params: { minAffinity: c.minAffinity },
    }) as Filter;
    assert.deepEqual(names(filter.filter(contextWith(), candidates)), c.want);
  });
}

test("topology-affinity-filter fails open: no peer, a peer without topology, or nobody close enough", () => {
  const filter = createSample("topology-affinity-filter") as Filter;
  const noPeer = makeContext();
  void (createSample("topology-extractor") as DataProducer).produce(noPeer, POOL);
  assert.equal(filter.filter(noPeer, candidates), candidates);
  assert.equal(filter.filter(contextWith(at("ghost")), candidates).length, candidates.length, "peer unknown");
  const far = [at("x", "h9", "z9", "r9")];
  assert.deepEqual(names(filter.filter(contextWith(), far)), ["x"]);
});

test("topology-affinity-scorer: host 1, zone 0.05, region 0.02, none 0 (no rack source)", () => {
  const scorer = createSample("topology-affinity-scorer") as Scorer;
  assert.deepEqual(Array.from(scorer.score(contextWith(), candidates)), [1, 0.05, 0.02, 0, 0.02]);
  assert.deepEqual(Array.from(scorer.score(makeContext(), candidates)), [0, 0, 0, 0, 0], "no peer");
});

test("topology-extractor: the pod name is the hostname by default; a missing hostnameLabel never matches", () => {
  const scorer = createSample("topology-affinity-scorer") as Scorer;
  const byName = contextWith(peer, {} as { hostnameLabel: string });
  // Different pod names are different hosts; same-host only shares the zone now.
  assert.deepEqual(Array.from(scorer.score(byName, [peer, ...candidates.slice(0, 2)])), [1, 0.05, 0.05]);
  const unlabeled = POOL[5]!;
  const scores = scorer.score(contextWith(unlabeled), [unlabeled]);
  assert.deepEqual(Array.from(scores), [0.02], "no hostname or zone on either side: only the region matches");
});
