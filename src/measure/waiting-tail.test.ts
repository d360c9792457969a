import assert from "node:assert/strict";
import { test } from "node:test";
import { newRecord, type RequestRecord } from "./records.ts";
import { completedTtftsMs, measuredRecords, waitingTail } from "./waiting-tail.ts";

function request(arrivalMs: number, firstTokenMs: number, error?: string): RequestRecord {
  const r = newRecord(`r${arrivalMs}`, "main", arrivalMs, 100);
  r.firstTokenMs = firstTokenMs;
  if (error) r.error = error;
  return r;
}

test("a request without a first token waits until the cut; failed and out-of-window ones do not count", () => {
  const records = [
    ...Array.from({ length: 98 }, (_, i) => request(1000 + i, 1000 + i + 500)),
    request(2000, Number.NaN), // still queued at the cut: 10,000 − 2,000
    request(2001, Number.NaN, "rejected-capacity"),
    request(500, 99_000), // before the window
    request(5000, 6000), // after the window
  ];
  const tail = waitingTail(records, 1000, 5000, 10_000);
  assert.equal(tail.unfinished, 1);
  // 99 waits: 98 of 500 ms and one of 8,000 ms; the 99th percentile (nearest rank 99) is 8,000
  assert.equal(tail.p99Ms, 8000);
  assert.equal(tail.waitsMs.length, 99);
  assert.equal(tail.waitsMs[98], 8000);
  const served = waitingTail(records.slice(0, 98), 1000, 5000, 10_000);
  assert.equal(served.p99Ms, 500);
  assert.equal(served.unfinished, 0);
});

test("completed TTFTs leave out the unfinished, the failed and those still decoding", () => {
  const done = request(1000, 1200);
  done.endMs = 1500;
  const decoding = request(1100, 1400); // first token, no end
  const queued = request(1200, Number.NaN);
  const failed = request(1300, 1350, "upstream-error");
  failed.endMs = 1400;
  const measured = measuredRecords([done, decoding, queued, failed], 1000, 5000);
  assert.deepEqual(Array.from(completedTtftsMs(measured)), [200]);
});
