/** `llmd plugins --json` lists every registered plugin with parameters and the llm-d types not implemented. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Command } from "commander";
import { registerPlugins } from "../../src/cli/commands/plugins.ts";

async function runPlugins(args: string[]): Promise<string> {
  const program = new Command();
  registerPlugins(program);
  const lines: string[] = [];
  const original = console.log;
  console.log = (...parts: unknown[]) => void lines.push(parts.join(" "));
  try {
    await program.parseAsync(["node", "llmd", "plugins", ...args]);
  } finally {
    console.log = original;
  }
  return lines.join("\n");
}

test("--json: stability, kinds and JSON-schema parameters; unimplemented llm-d types by what they lack", async () => {
  const out = JSON.parse(await runPlugins(["--json"]));
  const byType = new Map(out.plugins.map((p: { type: string }) => [p.type, p]));
  const picker = byType.get("max-score-picker") as {
    stability: string;
    kinds: string[];
    parameters: { properties: Record<string, { default: number }> };
  };
  assert.equal(picker.stability, "beta");
  assert.deepEqual(picker.kinds, ["picker"]);
  assert.equal(picker.parameters.properties.maxNumOfEndpoints!.default, 1);
  assert.deepEqual((byType.get("utilization-filter") as { kinds: string[] }).kinds, ["filter"]);
  const planned = Object.entries(out.planned as Record<string, string[]>);
  const pd = planned.find(([, types]) => types.includes("pd-profile-handler"));
  assert.match(pd?.[0] ?? "", /^P\/D beyond disagg-profile-handler \(not built/);
  assert.ok(!planned.some(([, types]) => types.includes("disagg-profile-handler")), "built, so not planned");
  const discovery = byType.get("file-discovery") as { stability: string; parameters: { required: string[] } };
  assert.equal(discovery.stability, "beta");
  assert.deepEqual(discovery.parameters.required, ["path"]);
  for (const [type, kind] of [
    ["metrics-data-source", "data-source"],
    ["core-metrics-extractor", "extractor"],
    ["endpoint-notification-source", "data-source"],
    ["data-parallel-profile-handler", "profile-handler"],
  ] as const)
    assert.ok((byType.get(type) as { kinds: string[] }).kinds.includes(kind), `${type} is a ${kind}`);
  assert.ok(
    !Object.values(out.planned).flat().includes("queue-scorer"),
    "registered types are not listed as planned",
  );
});

test("table output names every plugin and the experimental flag", async () => {
  const out = await runPlugins([]);
  for (const type of ["queue-scorer", "single-profile-handler", "weighted-random-picker", "decode-filter"])
    assert.match(out, new RegExp(`^${type} `, "m"));
  assert.match(out, /--allow-experimental-plugins/);
  // A default behind a transform (a port as number or numeric string) still shows as the default.
  assert.match(out, /^dcgm-data-source .* port=9400 /m);
  assert.match(out, /^metrics-data-source .* port:number,string /m);
});
