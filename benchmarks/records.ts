/**
 * Where a fleet run's slow and unfinished requests waited, from the per-request records that
 * `npm run bench -- folds … --records <dir>` writes (one JSON file per run):
 *
 *   npm run bench -- records <dir>/ours-f0-l192-s1.json [more.json …] [--slowest 5]
 *     [--at 30,60,90,150] [--from-s 60] [--to-s 300] [--cut-s 420] [--idle-s 90] [--kv-tokens 861664]
 *
 * Per file: the slowest measured requests (engine wait, own prefill, what was still prefilling
 * ahead on their replica), requests / sessions / unfinished per replica, and each replica's live
 * session footprint in units of one replica's KV at the chosen times. The window defaults are the
 * fold runs' (warm-up 60 s, 300 s, drain cut 420 s); `--kv-tokens` is one h200-llama3-8b
 * replica's KV (53,854 blocks of 16). Sessions are read from Weka request ids (`weka:<session>:…`).
 */
import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import type { RequestRecord } from "../src/measure/records.ts";
import { footprintTimeline, replicaOutcomes, slowestRequests } from "../src/report/records-report.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    slowest: { type: "string", default: "5" },
    at: { type: "string", default: "30,60,90,150" },
    "from-s": { type: "string", default: "60" },
    "to-s": { type: "string", default: "300" },
    "cut-s": { type: "string", default: "420" },
    "idle-s": { type: "string", default: "90" },
    "kv-tokens": { type: "string", default: "861664" },
  },
});
if (positionals.length === 0) {
  console.error("usage: npm run bench -- records <records.json> [more.json …] [options]");
  process.exit(2);
}
const missing = positionals.filter((file) => !existsSync(file));
if (missing.length > 0) {
  console.error(
    `no such records file: ${missing.join(", ")} (the runs write <policy>-<cell>.json under --records)`,
  );
  process.exit(2);
}

const ms = (name: keyof typeof values) => Number(values[name]) * 1000;
const kv = Number(values["kv-tokens"]);
const sessionOf = (id: string) => id.split(":").slice(0, 2).join(":");
const s = (x: number) => (Number.isFinite(x) ? (x / 1000).toFixed(1) : "–");
const k = (tokens: number) => `${Math.round(tokens / 1000)}K`;

for (const file of positionals) {
  // JSON turns the records' NaN (never happened) into null.
  const records = (JSON.parse(readFileSync(file, "utf8")) as RequestRecord[]).map((r) => {
    const copy = { ...r } as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(copy)) if (value === null) copy[key] = Number.NaN;
    return copy as unknown as RequestRecord;
  });
  const from = ms("from-s");
  const to = ms("to-s");
  console.log(`\n## ${basename(file)}\n`);
  console.log(
    "| request | replica | TTFT s | engine wait s | own prefill s | prompt | cached | ideal cached | no first token yet ahead on its replica (uncached) |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const slow of slowestRequests(records, from, to, ms("cut-s"), Number(values.slowest))) {
    const r = slow.record;
    const listed = slow.ahead.slice(0, 3).map((o) => `${o.id} (${k(o.inputTokens - o.cachedTokens)})`);
    if (slow.ahead.length > 3) listed.push(`${slow.ahead.length - 3} more`);
    const ahead = listed.join(", ");
    console.log(
      `| ${r.id} | ${r.endpoint} | ${s(slow.ttftMs)} | ${s(slow.engineWaitMs)} | ${s(slow.ownPrefillMs)} | ${k(r.inputTokens)} | ${k(r.cachedTokens)} | ${k(r.idealCachedTokens)} | ${ahead} |`,
    );
  }
  console.log("\n| replica | requests | sessions | unfinished | prefilled |");
  console.log("|---|---|---|---|---|");
  for (const o of replicaOutcomes(records, from, to, sessionOf))
    console.log(
      `| ${o.endpoint} | ${o.requests} | ${o.sessions} | ${o.unfinished} | ${k(o.prefilledTokens)} |`,
    );
  const at = values.at.split(",").map(Number);
  const timeline = footprintTimeline(
    records,
    at.map((t) => t * 1000),
    ms("idle-s"),
    sessionOf,
  );
  console.log("\n| at s | fleet | live session footprint per replica (× one replica's KV) |");
  console.log("|---|---|---|");
  for (const [i, sums] of timeline.entries()) {
    const fleet = sums.reduce((a, b) => a + b, 0) / (kv * sums.length);
    console.log(`| ${at[i]} | ${fleet.toFixed(2)} | ${sums.map((t) => (t / kv).toFixed(2)).join(" ")} |`);
  }
}
