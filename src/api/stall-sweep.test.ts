import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StallSweep, type StallWatched } from "./stall-sweep.ts";

function watched(lastReadAt: number, onStalled: () => void): StallWatched {
  return { lastReadAt, stalled: onStalled };
}

describe("StallSweep", () => {
  it("ends a read whose last byte is older than the timeout, once, and leaves fresh and unwatched reads", async () => {
    const sweep = new StallSweep(40);
    const calls: string[] = [];
    let stalledOnce!: () => void;
    const stalled = new Promise<void>((resolve) => {
      stalledOnce = resolve;
    });
    const stale = watched(Date.now() - 10_000, () => {
      calls.push("stale");
      stalledOnce();
    });
    const fresh = watched(Date.now() + 60_000, () => calls.push("fresh"));
    const gone = watched(Date.now() - 10_000, () => calls.push("gone"));
    sweep.watch(stale);
    sweep.watch(fresh);
    sweep.watch(gone);
    sweep.unwatch(gone);
    // The sweep's interval is unref'd (it never holds a process open): keep this one alive.
    const alive = setInterval(() => {}, 1000);
    await stalled;
    clearInterval(alive);
    assert.deepEqual(calls, ["stale"]);
    assert.equal(sweep.size, 1);
    sweep.unwatch(fresh);
  });
});
