/**
 * `npm run bench -- staged-prefill [--tokens 200000] [--iterations 50]`: what the gateway's event
 * loop pays to build a `staged-prefill` plan's stage bodies for a prompt of `--tokens` ids nobody
 * holds (the default plan: a stage every 32,768 tokens). The ids are written as digits a slice
 * between two event-loop turns (src/gateway/staged-prefill.ts): each slice is timed, and per
 * prompt all of them added up, in wall time and in the event loop's thread's time on a CPU (from
 * the kernel, tokenize-turn/thread-schedule.ts: a slice long in wall time but not on a CPU waited
 * for the CPU). Medians, p99 and maxima over `--iterations` prompts after three untimed ones;
 * with `NODE_OPTIONS=--expose-gc` a GC between prompts, untimed. The chat rows do the same for a
 * chat of as many tokens (by the 4-characters-a-token count), staged after its messages: each
 * event-loop turn of writing its stages' messages is timed from the turns around it.
 */
import { parseArgs } from "node:util";
import { renderChat } from "../src/api/prompt.ts";
import { ChatStageBodies, IdStageBodies } from "../src/gateway/staged-prefill.ts";
import { messageCuts, stageCuts } from "../src/scheduler/plugins/staged-prefill/index.ts";
import { ThreadSchedule } from "./tokenize-turn/thread-schedule.ts";

const { values } = parseArgs({
  options: { tokens: { type: "string", default: "200000" }, iterations: { type: "string", default: "50" } },
});
const length = Number(values.tokens);
const iterations = Number(values.iterations);
const collect = (globalThis as { gc?: () => void }).gc;
const tokens = Uint32Array.from({ length }, (_, i) => (i * 7919) % 128_256);
const cuts = stageCuts(length, 0, 32_768);
const model = "meta-llama/Llama-3.1-8B-Instruct";

const schedule = new ThreadSchedule();
const slices: number[] = [];
const sliceCpu: number[] = [];
const prompts: number[] = [];
for (let i = 0; i < iterations + 3; i++) {
  collect?.();
  const bodies = new IdStageBodies({ model, cacheSalt: undefined }, tokens, cuts.at(-1)!);
  const times: number[] = [];
  const cpu: number[] = [];
  for (const cut of cuts) {
    for (let more = true; more; ) {
      const started = performance.now();
      const before = schedule.read();
      more = bodies.writeSlice(cut);
      const after = schedule.read();
      times.push(performance.now() - started);
      cpu.push((after.cpuNs - before.cpuNs) / 1e6);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await bodies.upTo(cut);
  }
  if (i < 3) continue;
  slices.push(...times);
  sliceCpu.push(...cpu);
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
console.log(row("one slice of ids, on the event loop: wall", slices));
console.log(row("the same, on a CPU", sliceCpu));
console.log(row("all slices of a prompt, added up", prompts));

// A coding agent's chat: a system prompt, turns of 40K characters, and one 400K-character tool result.
const line = (i: number) => `line ${i}: const value = compute(${i}) // "quoted" \\ path\n`;
const text = (from: number, chars: number) => {
  let out = "";
  for (let i = from; out.length < chars; i++) out += line(i);
  return out.slice(0, chars);
};
const turns = Math.max(2, Math.round((length * 4 - 420_000) / 40_000));
const messages = [
  { role: "system", content: text(0, 20_000) },
  ...Array.from({ length: turns }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: text(i * 1000, i === Math.floor(turns / 2) ? 400_000 : 40_000),
  })),
  { role: "user", content: "continue" },
];
const chatTokens = Math.ceil(renderChat(messages).length / 4);
const chatPlan = messageCuts(messages, stageCuts(chatTokens, 0, 32_768), chatTokens, 0);
const turnsWall: number[] = [];
const turnsCpu: number[] = [];
const chats: number[] = [];
for (let i = 0; i < iterations + 3; i++) {
  collect?.();
  const bodies = new ChatStageBodies(model, { messages }, chatPlan);
  const wall: number[] = [];
  const cpu: number[] = [];
  let done = false;
  let lastWall = performance.now();
  let lastCpu = schedule.read().cpuNs;
  const tick = () => {
    const now = performance.now();
    const cpuNs = schedule.read().cpuNs;
    wall.push(now - lastWall);
    cpu.push((cpuNs - lastCpu) / 1e6);
    lastWall = now;
    lastCpu = cpuNs;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  for (const cut of chatPlan.cuts) await bodies.upTo(cut);
  const took = performance.now() - started;
  done = true;
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (i < 3) continue;
  turnsWall.push(...wall);
  turnsCpu.push(...cpu);
  chats.push(took);
}
console.log(
  `\nStage bodies of a chat of ${messages.length} messages, ${chatTokens.toLocaleString("en")} tokens: ${chatPlan.cuts.length} stages (after messages ${chatPlan.messages.join(", ")})\n`,
);
console.log("| ms | count | p50 | p99 | max |");
console.log("|---|---|---|---|---|");
console.log(row("one event-loop turn while the messages are written: wall", turnsWall));
console.log(row("the same, on a CPU", turnsCpu));
console.log(row("all stages' messages of a chat, written (wall, with the turns between)", chats));
