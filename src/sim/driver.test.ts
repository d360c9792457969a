import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock } from "../core/clock.ts";
import { createEngine } from "../engine/index.ts";
import type { StepOutput } from "../engine/types.ts";
import { EngineDriver, type HostTimers } from "./driver.ts";

const TTFT_MS = 20;
const ITL_MS = 10;

/** A host whose timers fire only when the test says, `lateMs` after they were due. */
class ScriptedHost implements HostTimers {
  private pending: { dueMs: number; fn: () => void }[] = [];

  constructor(private readonly clock: ManualClock) {}

  schedule(delayMs: number, fn: () => void): () => void {
    const entry = { dueMs: this.clock.now() + Math.max(0, delayMs), fn };
    this.pending.push(entry);
    return () => {
      this.pending = this.pending.filter((e) => e !== entry);
    };
  }

  /** Fires the earliest timer `lateMs` after it was due (or now, if that is later). */
  fire(lateMs: number): void {
    this.pending.sort((a, b) => a.dueMs - b.dueMs);
    const next = this.pending.shift();
    assert.ok(next, "no timer pending");
    this.clock.set(Math.max(this.clock.now(), next.dueMs + lateMs));
    next.fn();
  }

  get idle(): boolean {
    return this.pending.length === 0;
  }
}

/** Collects a request's outputs with the engine time and the wall time each was delivered at. */
class Recorder {
  readonly seen: { atMs: number; wallMs: number; out: StepOutput }[] = [];
  constructor(private readonly clock: ManualClock) {}
  onOutput(out: StepOutput, atMs: number): void {
    this.seen.push({ atMs, wallMs: this.clock.now(), out });
  }
}

function setup(catchUpMs = 50) {
  const clock = new ManualClock(1000);
  const host = new ScriptedHost(clock);
  const engine = createEngine({
    timing: { kind: "simple", timeToFirstTokenMs: TTFT_MS, interTokenLatencyMs: ITL_MS },
  });
  const driver = new EngineDriver(engine, 1, { clock, timers: host, catchUpMs });
  const submit = (id: string, maxTokens: number) => {
    const sink = new Recorder(clock);
    const promptTokens = Uint32Array.from({ length: 64 }, (_, i) => i + id.length * 1000);
    assert.equal(driver.submit({ id, promptTokens, maxTokens }, sink), null);
    return sink;
  };
  return { clock, host, driver, submit };
}

describe("EngineDriver timeline", () => {
  it("keeps steps on the engine timeline when every timer fires a little late", () => {
    const { host, driver, submit } = setup();
    const sink = submit("a", 11);
    while (!host.idle) host.fire(3);
    const wall = sink.seen.map((s) => s.wallMs - 1000);
    // Prefill ends at 20, then ten 10 ms decode steps: each delivered 3 ms late, none stretched.
    assert.deepEqual(
      sink.seen.map((s) => s.atMs),
      [20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120],
    );
    assert.deepEqual(wall, [23, 33, 43, 53, 63, 73, 83, 93, 103, 113, 123]);
    assert.equal(driver.hostTiming().stalledMs, 0);
    assert.equal(driver.hostTiming().lateMs, 33);
  });

  it("never lets a request join a step that started before it arrived", () => {
    const { clock, host, submit } = setup();
    const first = submit("a", 5);
    host.fire(0); // setImmediate: prefill of a, 1000..1020
    host.fire(8); // a's prefill delivered at wall 1028; its first decode step starts at engine 20
    // b arrives at engine 28, while that decode step (20..30) is in flight on the timeline.
    clock.set(1028);
    const second = submit("b", 2);
    while (!host.idle) host.fire(0);
    const firstOfB = second.seen.find((s) => s.out.first);
    assert.ok(firstOfB);
    // b's prefill is in the step starting at 30, not the one that started at 20: 30 + TTFT.
    assert.equal(firstOfB.atMs, 30 + TTFT_MS);
    assert.equal(first.seen.at(-1)?.out.finished, true);
  });

  it("delivers the steps already due before a late-arriving request joins, so running ones lose nothing", () => {
    const { clock, host, submit } = setup();
    const running = submit("a", 12);
    host.fire(0); // prefill 0..20
    host.fire(0); // delivered at 1020; decode 20..30
    host.fire(0); // delivered at 1030; decode 30..40, due at wall 1040
    clock.set(1065); // the host is busy: that timer has not fired, and neither would the next two
    const late = submit("b", 2);
    // Steps 30..40, 40..50 and 50..60 ran on the GPU before b arrived at 65: delivered at once.
    assert.deepEqual(
      running.seen.map((s) => s.atMs),
      [20, 30, 40, 50, 60],
    );
    while (!host.idle) host.fire(0);
    // b joins the step starting at 70 (prefill and decode together take max(TTFT, ITL) = 20 ms).
    assert.equal(late.seen.find((s) => s.out.first)?.atMs, 70 + TTFT_MS);
    assert.deepEqual(
      running.seen.slice(5, 7).map((s) => s.atMs),
      [70, 90],
    );
  });

  it("treats lateness beyond catchUpMs as a stall and pauses engine time by the excess", () => {
    const { clock, host, driver, submit } = setup(50);
    const sink = submit("a", 3);
    host.fire(0);
    host.fire(200); // prefill due at wall 1020, delivered at 1220: a 150 ms stall beyond the bound
    while (!host.idle) host.fire(0);
    assert.equal(driver.hostTiming().stalledMs, 150);
    assert.deepEqual(
      sink.seen.map((s) => s.atMs),
      [20, 30, 40],
    );
    // The timeline now trails the host by exactly the bound (engine 20 = wall 1170), so the two
    // decode steps (due at wall 1180 and 1190) are caught up back to back.
    assert.deepEqual(
      sink.seen.map((s) => s.wallMs),
      [1220, 1220, 1220],
    );
    assert.equal(clock.now(), 1220);
  });

  it("starts an idle engine's step at the request's arrival", () => {
    const { clock, host, submit } = setup();
    clock.set(1500);
    const sink = submit("a", 1);
    clock.set(1502); // the host turns round 2 ms later; the GPU would not have waited
    host.fire(0);
    host.fire(0);
    assert.equal(sink.seen[0]!.atMs, 500 + TTFT_MS);
    assert.equal(sink.seen[0]!.wallMs, 1500 + TTFT_MS);
  });
});
