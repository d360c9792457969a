/**
 * `npm run bench -- staged-prefill [--tokens 200000] [--iterations 50]`: what the gateway's event
 * loop pays to build a `staged-prefill` plan's stage bodies for a prompt of `--tokens` ids nobody
 * holds (the default plan: a stage every 32,768 tokens). The ids are written as digits a slice
 * between two event-loop turns (src/gateway/staged-prefill.ts): each slice is timed, and per
 * prompt all of them added up. Wall time, so a slice that waited for the CPU reads long on a busy
 * machine; medians, p99 and maxima over `--iterations` prompts after three untimed ones, and with
 * `NODE_OPTIONS=--expose-gc` a GC between prompts, untimed.
 */
import { parseArgs } from "node:util";
import { StageBodies } from "../src/gateway/staged-prefill.ts";
import { stageCuts } from "../src/scheduler/plugins/staged-prefill/index.ts";

const { values } = parseArgs({
  options: { tokens: { type: "string", default: "200000" }, iterations: { type: "string", default: "50" } },
});
const length = Number(values.tokens);
const iterations = Number(values.iterations);
const collect = (globalThis as { gc?: () => void }).gc;
const tokens = Uint32Array.from({ length }, (_, i) => (i * 7919) % 128_256);
const cuts = stageCuts(length, 0, 32_768);
const model = "meta-llama/Llama-3.1-8B-Instruct";

const slices: number[] = [];
const prompts: number[] = [];
for (let i = 0; i < iterations + 3; i++) {
  collect?.();
  const bodies = new StageBodies({ model, tokens, cacheSalt: undefined }, cuts.at(-1)!);
  const times: number[] = [];
  for (const cut of cuts) {
    for (let more = true; more; ) {
      const started = performance.now();
      more = bodies.writeSlice(cut);
      times.push(performance.now() - started);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await bodies.upTo(cut);
  }
  if (i < 3) continue;
  slices.push(...times);
  prompts.push(times.reduce((a, b) => a + b, 0));
}
const sorted = (xs: number[]) => xs.toSorted((a, b) => a - b);
const at = (xs: number[], q: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const row = (name: string, xs: number[]) =>
  `| ${name} | ${xs.length} | ${at(xs, 0.5).toFixed(3)} | ${at(xs, 0.99).toFixed(3)} | ${Math.max(...xs).toFixed(3)} |`;
console.log(
  `\nStage bodies of a ${length.toLocaleString("en")}-token prompt: ${cuts.length} stages (cuts ${cuts.join(", ")})\n`,
);
console.log("| ms | count | p50 | p99 | max |");
console.log("|---|---|---|---|---|");
console.log(row("one slice of ids, on the event loop", slices));
console.log(row("all slices of a prompt, added up", prompts));
