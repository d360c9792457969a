import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LlmdError } from "../api/errors.ts";
import { makeContext, makeEndpoint } from "../scheduler/framework/testing.ts";
import type { RequestScheduler, SchedulingResult } from "../scheduler/framework/types.ts";
import { SampledScheduler } from "./sampled-scheduler.ts";

/** A scheduler that records which phases reached it. */
function recorder(calls: string[]): RequestScheduler {
  return {
    processRequestHeaders: () => void calls.push("processRequestHeaders"),
    prepare: () => void calls.push("prepare"),
    schedule: () => {
      calls.push("schedule");
      return new LlmdError("no_endpoint_picked", "none");
    },
    preRequest: () => void calls.push("preRequest"),
    firstToken: () => void calls.push("firstToken"),
    complete: () => void calls.push("complete"),
  };
}

describe("SampledScheduler", () => {
  it("sends the first and then every n-th call of each phase to the timed scheduler", () => {
    const plain: string[] = [];
    const timed: string[] = [];
    const scheduler = new SampledScheduler(recorder(plain), recorder(timed), 4);
    const ctx = makeContext();
    const endpoint = makeEndpoint("a");
    for (let i = 0; i < 9; i++) {
      scheduler.processRequestHeaders(ctx);
      scheduler.prepare(ctx, [endpoint]);
      scheduler.schedule(ctx, [endpoint]);
      scheduler.preRequest(ctx, {} as SchedulingResult);
      if (i % 2 === 0) scheduler.firstToken(ctx, endpoint);
      scheduler.complete(ctx, endpoint, "natural");
    }
    const count = (list: string[], phase: string) => list.filter((c) => c === phase).length;
    for (const phase of ["processRequestHeaders", "prepare", "schedule", "preRequest", "complete"]) {
      assert.equal(count(timed, phase), 3, phase);
      assert.equal(count(plain, phase), 6, phase);
    }
    // 5 firstToken calls: the 1st and 5th are timed, whatever the other phases did.
    assert.equal(count(timed, "firstToken"), 2);
    assert.equal(count(plain, "firstToken"), 3);
  });

  it("returns what the chosen scheduler returns", () => {
    const scheduler = new SampledScheduler(recorder([]), recorder([]), 8);
    const result = scheduler.schedule(makeContext(), [makeEndpoint("a")]);
    assert.ok(result instanceof LlmdError);
    assert.equal(result.status, 429);
  });
});
