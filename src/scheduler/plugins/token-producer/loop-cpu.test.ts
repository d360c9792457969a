import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { test } from "node:test";
import { allowedCpus, splitCpus, threadId } from "../../../core/cpu-affinity.ts";
import { encodeChat } from "../../../tokenizer/chat.ts";
import { loadTokenizer } from "../../../tokenizer/registry.ts";
import type { HostedPlugin } from "../../framework/hosted.ts";
import { makeContext } from "../../framework/testing.ts";
import type { DataProducer } from "../../framework/types.ts";
import { instantiate } from "../testing.ts";
import { definition } from "./index.ts";

type Producer = DataProducer & HostedPlugin;

/** This process's threads other than the calling one, with the CPUs each may run on. */
function otherThreads(): number[][] {
  const self = threadId();
  return readdirSync("/proc/self/task")
    .map(Number)
    .filter((tid) => tid !== self)
    .map((tid) => allowedCpus(tid));
}

async function started(): Promise<{ producer: Producer; gauge: () => number }> {
  const producer = instantiate<Producer>(definition, { tokenizer: "llama3.1", loopCpu: "dedicated" });
  await producer.start();
  const messages = [{ role: "user", content: "Pinned threads still tokenize the same. ".repeat(100) }];
  const ctx = makeContext({ path: "/v1/chat/completions", body: { messages } });
  await producer.produce(ctx, []); // the worker has pinned itself once it answers
  assert.deepEqual(ctx.request.tokens, encodeChat(loadTokenizer("llama3.1"), messages));
  const metric = producer.metrics().find((m) => m.name === "llmd_event_loop_cpu")!;
  return { producer, gauge: () => metric.value() };
}

// Pins this test file's threads (each test file runs in its own process).
test("loopCpu dedicated: the event loop runs on a CPU of its own, the worker and the other threads on the rest", async () => {
  const split = splitCpus(allowedCpus());
  const first = await started();
  try {
    if (split) {
      assert.equal(first.gauge(), split.loop[0]);
      assert.deepEqual(allowedCpus(), split.loop);
      const others = otherThreads();
      assert.ok(others.length >= 5, "V8's and libuv's threads and the worker");
      for (const cpus of others) assert.deepEqual(cpus, split.others, "no other thread on the loop's CPU");
    } else {
      assert.equal(first.gauge(), -1, "a single CPU: nothing to pin");
    }
  } finally {
    await first.producer.close();
  }
  const again = await started();
  try {
    assert.equal(again.gauge(), first.gauge(), "a second start keeps the same split");
    if (split) for (const cpus of otherThreads()) assert.deepEqual(cpus, split.others, "the new worker too");
  } finally {
    await again.producer.close();
  }
});

test("loopCpu shared (the default) pins nothing", async () => {
  const producer = instantiate<Producer>(definition, { tokenizer: "llama3.1" });
  await producer.start();
  try {
    const gauge = producer.metrics().find((m) => m.name === "llmd_event_loop_cpu")!;
    assert.equal(gauge.value(), -1);
  } finally {
    await producer.close();
  }
});
