import assert from "node:assert/strict";
import { once } from "node:events";
import { test } from "node:test";
import { allowedCpus, parseCpuList, splitCpus, threadId } from "./cpu-affinity.ts";
import { tsWorker } from "./ts-worker.ts";

test("parseCpuList reads the kernel's list syntax", () => {
  assert.deepEqual(parseCpuList("0-3,5,7-8\n"), [0, 1, 2, 3, 5, 7, 8]);
  assert.deepEqual(parseCpuList("1"), [1]);
  assert.throws(() => parseCpuList("0-x"), /bad CPU list/);
});

test("splitCpus keeps the last CPU for the worker and needs two", () => {
  assert.equal(splitCpus([3]), undefined);
  assert.deepEqual(splitCpus([0, 1]), { loop: [0], worker: 1 });
  assert.deepEqual(splitCpus([0, 2, 4, 6]), { loop: [0, 2, 4], worker: 6 });
});

test("a thread pins itself to one CPU and the others keep theirs", async () => {
  const before = allowedCpus();
  assert.ok(before.length > 0, "this process's CPUs are readable");
  assert.ok(Number.isInteger(threadId()));
  const target = before[before.length - 1]!;
  const worker = tsWorker(new URL("./testdata/pin-self.ts", import.meta.url), [target]);
  const [reply] = (await once(worker, "message")) as [{ pinned: boolean; allowed: number[] }];
  await worker.terminate();
  assert.deepEqual(reply, { pinned: true, allowed: [target] });
  assert.deepEqual(allowedCpus(), before, "the calling thread is untouched");
});
