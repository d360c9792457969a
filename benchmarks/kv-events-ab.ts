/**
 * `npm run bench -- kv-events-ab --before=<checkout> [--sizes=1024,32768,200000] [--endpoints=64]`:
 * the precise index's decision cost in an earlier checkout against this one, decision by decision in
 * one process, so both see the same machine load (the kv-events benchmark's runs, in separate
 * processes on a shared machine, differ by up to 2x). Each side loads its own
 * examples/configs/precise.yaml; both ingest the same events (`--endpoints` endpoints holding 256K
 * tokens each) and decide the same prompts, alternating: never seen (nobody holds it), first sight
 * (a held prompt's first decision) and seen (decided again). Prints CPU milliseconds per decision,
 * median and mean (the mean carries the rare decisions that meet a table growth or a collection).
 *
 *   git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   npm run bench -- kv-events-ab --before=/tmp/before
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { conversationStored, cpuMicros } from "./kv-events/held-conversation.ts";
import { tokenStream } from "./kv-events/token-stream.ts";

const { values } = parseArgs({
  options: {
    before: { type: "string" },
    sizes: { type: "string", default: "1024,32768,200000" },
    endpoints: { type: "string", default: "64" },
  },
});
if (!values.before) throw new Error("--before=<checkout of the earlier commit> is required");
const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
const ENDPOINTS = Number(values.endpoints);
const HELD_TOKENS = 262_144;

interface Scheduler {
  prepare(ctx: unknown, endpoints: unknown): unknown;
  schedule(ctx: unknown, endpoints: unknown): unknown;
  preRequest(ctx: unknown, result: unknown): void;
}

/** One checkout's config loader and test helpers. */
async function side(name: string, root: string) {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { loadConfig } = await load("src/config/index.ts");
  const { makeContext, makeEndpoint } = await load("src/scheduler/framework/testing.ts");
  const config = loadConfig({ path: join(root, "examples/configs/precise.yaml") });
  const producer = config.plugins.get("precise-prefix-cache-producer") as {
    kvEvents(events: unknown[], endpointKey: string, model: string): void;
  };
  const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => makeEndpoint(`pod-${i}`)) as {
    metadata: { key: string };
  }[];
  const scheduler = config.scheduler as Scheduler;
  return { name, producer, endpoints, scheduler, makeContext: makeContext as (r: unknown) => unknown };
}

const cpuMs = (fn: () => void) => cpuMicros(fn) / 1000;

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;

const rows: Record<string, string | number>[] = [];
for (const promptTokens of values.sizes.split(",").map(Number)) {
  const sides = [await side("before", resolve(values.before)), await side("after", process.cwd())];
  const conversations = Math.max(1, Math.floor(HELD_TOKENS / promptTokens));
  const held: Uint32Array[] = [];
  for (let e = 0; e < ENDPOINTS; e++)
    for (let c = 0; c < conversations; c++) {
      const tokens = tokenStream(promptTokens * 1000 + e * conversations + c, promptTokens);
      if (c === conversations - 1) held.push(tokens);
      const event = conversationStored(e * conversations + c, tokens);
      for (const s of sides) s.producer.kvEvents([event], s.endpoints[e]!.metadata.key, MODEL);
    }
  const unseen = Array.from({ length: ENDPOINTS }, (_, i) =>
    tokenStream(9_000_000 + promptTokens + i, promptTokens),
  );
  const reps = promptTokens > 100_000 ? 3 : 10;
  const paths = [
    ["never seen", unseen, 1],
    ["first sight", held, 1],
    ["seen", held, reps],
  ] as const;
  for (const [path, prompts, rounds] of paths) {
    const times = sides.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++)
      for (const tokens of prompts)
        sides.forEach((s, i) => {
          times[i]!.push(
            cpuMs(() => {
              const ctx = s.makeContext({ model: MODEL, promptText: "", tokens });
              void s.scheduler.prepare(ctx, s.endpoints);
              s.scheduler.preRequest(ctx, s.scheduler.schedule(ctx, s.endpoints));
            }),
          );
        });
    const [before, after] = times as [number[], number[]];
    rows.push({
      prompt: `${promptTokens} tokens, ${path}`,
      decisions: before.length,
      "before p50 ms": +median(before).toFixed(2),
      "after p50 ms": +median(after).toFixed(2),
      "before mean ms": +mean(before).toFixed(2),
      "after mean ms": +mean(after).toFixed(2),
    });
  }
}
console.log(
  `Precise index decision CPU, ${values.before} (before) against this checkout (after), ${ENDPOINTS} endpoints`,
);
console.table(rows);
