/** What the KV-event benchmarks feed an index: one conversation an engine holds, and CPU time. */
import type { IndexKvEvent } from "../../src/kv-index/index.ts";

/** Engine block size of the benchmarks' engines (vLLM's default). */
export const ENGINE_BLOCK = 16;

/** The `BlockStored` of conversation `n`'s `tokens` from the chain's start, engine keys unique per `n`. */
export function conversationStored(n: number, tokens: Uint32Array): IndexKvEvent {
  const id = BigInt(n) << 24n;
  return {
    type: "BlockStored",
    blockHashes: Array.from({ length: tokens.length / ENGINE_BLOCK }, (_, i) => id + BigInt(i)),
    parentBlockHash: null,
    tokenIds: tokens,
    blockSize: ENGINE_BLOCK,
    lora: null,
    medium: "GPU",
  };
}

/** CPU microseconds (user + system) of `fn`. */
export function cpuMicros(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}
