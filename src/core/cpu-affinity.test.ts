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

test("splitCpus gives the event loop the first CPU and the rest to the others, and needs two", () => {
  assert.equal(splitCpus([3]), undefined);
  assert.deepEqual(splitCpus([0, 1]), { loop: [0], others: [1] });
  assert.deepEqual(splitCpus([0, 2, 4, 6]), { loop: [0], others: [2, 4, 6] });
});

test("a worker started with CPUs runs only there; the caller keeps its own", async () => {
  const before = allowedCpus();
  assert.ok(before.length > 0, "this process's CPUs are readable");
  assert.ok(Number.isInteger(threadId()));
  const target = before[before.length - 1]!;
  const worker = tsWorker(new URL("./testdata/report-cpus.ts", import.meta.url), null, [target]);
  const [cpus] = (await once(worker, "message")) as [number[]];
  await worker.terminate();
  assert.deepEqual(cpus, [target]);
  assert.deepEqual(allowedCpus(), before, "the calling thread is untouched");
});
