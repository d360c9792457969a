/** `llmd plugins --json` lists every registered plugin with parameters and the planned llm-d types. */
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

test("--json: stability, kinds and JSON-schema parameters; planned types by issue", async () => {
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
  assert.ok(out.planned["not yet planned"].includes("disagg-profile-handler"));
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
});
