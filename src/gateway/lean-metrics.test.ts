import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { LeanHistogram, LeanValue } from "./lean-metrics.ts";

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED = [0.0005, 0.001, 0.05, 0.5, 3, 0.02];

/** Same observations through prom-client and through the lean instruments. */
async function render(): Promise<{ reference: string; lean: string }> {
  const ref = new Registry();
  const lean = new Registry();
  const labels = { model_name: 'm"1', target_model_name: "m1" };
  const names = ["model_name", "target_model_name"] as const;
  const refHistogram = new Histogram({
    name: "h",
    help: "a histogram",
    buckets: BUCKETS,
    labelNames: names,
    registers: [ref],
  });
  const leanHistogram = new LeanHistogram("h", "a histogram", BUCKETS, names, lean).child(labels);
  for (const v of OBSERVED) {
    refHistogram.observe(labels, v);
    leanHistogram.observe(v);
  }
  new Counter({ name: "c", help: "a counter", labelNames: names, registers: [ref] }).inc(labels, 3);
  new LeanValue("counter", "c", "a counter", names, lean).child(labels).inc(3);
  const refGauge = new Gauge({ name: "g", help: "a gauge", labelNames: names, registers: [ref] });
  refGauge.inc(labels, 2);
  refGauge.dec(labels);
  const leanGauge = new LeanValue("gauge", "g", "a gauge", names, lean).child(labels);
  leanGauge.inc(2);
  leanGauge.dec();
  new Histogram({ name: "u", help: "unlabelled", buckets: BUCKETS, registers: [ref] });
  new LeanHistogram("u", "unlabelled", BUCKETS, [], lean);
  return { reference: await ref.metrics(), lean: await lean.metrics() };
}

describe("lean metrics", () => {
  it("render exactly the Prometheus text prom-client renders for the same observations", async () => {
    const { reference, lean } = await render();
    assert.equal(lean, reference);
    assert.match(lean, /h_bucket\{le="0.1",model_name="m\\"1",target_model_name="m1"\} 4/);
  });

  it("hands out one child per label set", () => {
    const family = new LeanValue("counter", "c", "help", ["a"], new Registry());
    family.child({ a: "x" }).inc();
    family.child({ a: "x" }).inc();
    family.child({ a: "y" }).inc();
    assert.deepEqual(
      family.get().values.map((v) => [v.labels.a, v.value]),
      [
        ["x", 2],
        ["y", 1],
      ],
    );
  });
});
