import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { test } from "node:test";
import { allowedCpus, splitCpus } from "../../../core/cpu-affinity.ts";
import { encodeChat } from "../../../tokenizer/chat.ts";
import { loadTokenizer } from "../../../tokenizer/registry.ts";
import type { HostedPlugin } from "../../framework/hosted.ts";
import { makeContext } from "../../framework/testing.ts";
import type { DataProducer } from "../../framework/types.ts";
import { instantiate } from "../testing.ts";
import { definition } from "./index.ts";

type Producer = DataProducer & HostedPlugin;

/** This process's threads that may run only on `cpu`. */
function threadsOnlyOn(cpu: number): number[] {
  return readdirSync("/proc/self/task")
    .map(Number)
    .filter((tid) => {
      const allowed = allowedCpus(tid);
      return allowed.length === 1 && allowed[0] === cpu;
    });
}

// Pins this test file's main thread (each test file runs in its own process).
test("workerCpu dedicated: the tokenizer worker runs on a CPU of its own, the event loop on the others", async () => {
  const split = splitCpus(allowedCpus());
  const producer = instantiate<Producer>(definition, { tokenizer: "llama3.1", workerCpu: "dedicated" });
  await producer.start();
  try {
    const messages = [{ role: "user", content: "Pinned threads still tokenize the same. ".repeat(100) }];
    const ctx = makeContext({ path: "/v1/chat/completions", body: { messages } });
    await producer.produce(ctx, []);
    assert.deepEqual(ctx.request.tokens, encodeChat(loadTokenizer("llama3.1"), messages));
    const gauge = producer.metrics().find((m) => m.name === "llmd_tokenizer_worker_cpu")!;
    if (split) {
      assert.equal(gauge.value(), split.worker);
      assert.deepEqual(allowedCpus(), split.loop, "the event loop's thread keeps off the worker's CPU");
      assert.equal(threadsOnlyOn(split.worker).length, 1, "exactly one thread (the worker) is on it");
    } else {
      assert.equal(gauge.value(), -1, "a single CPU: nothing to pin");
    }
  } finally {
    await producer.close();
  }
  const restarted = instantiate<Producer>(definition, { tokenizer: "llama3.1", workerCpu: "dedicated" });
  await restarted.start();
  try {
    await restarted.produce(
      makeContext({ path: "/v1/chat/completions", body: { messages: [{ role: "user", content: "again" }] } }),
      [],
    );
    const gauge = restarted.metrics().find((m) => m.name === "llmd_tokenizer_worker_cpu")!;
    assert.equal(gauge.value(), split ? split.worker : -1, "a second start gets the same CPU");
    if (split) assert.equal(threadsOnlyOn(split.worker).length, 1);
  } finally {
    await restarted.close();
  }
});

test("workerCpu shared (the default) pins nothing", async () => {
  const producer = instantiate<Producer>(definition, { tokenizer: "llama3.1" });
  await producer.start();
  try {
    const gauge = producer.metrics().find((m) => m.name === "llmd_tokenizer_worker_cpu")!;
    assert.equal(gauge.value(), -1);
  } finally {
    await producer.close();
  }
});
