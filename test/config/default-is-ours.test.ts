/**
 * examples/configs/default.yaml (what `llmd router` runs without --config) is the `ours` policy
 * the fleet benchmarks measure (examples/scenarios/policies/ours.yaml), plus two plugins that
 * change no decision in those runs: decode-filter (keeps every endpoint without P/D roles) and
 * response-chain-scorer (scores 0 everywhere unless a Responses turn continues a chain its
 * prefix index does not know). The measured numbers hold for the default only while the rest is
 * equal, plugin for plugin.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parse } from "yaml";

const ROOT = join(import.meta.dirname, "../..");
const ONLY_IN_DEFAULT = new Set(["decode-filter", "response-chain-scorer"]);

interface Config {
  plugins: { type: string; name?: string; parameters?: unknown }[];
  schedulingProfiles: { name: string; plugins: { pluginRef: string; weight?: number }[] }[];
}

/** Plugins (type → parameters) and the profile's steps (type and weight, in order). */
function routing(path: string) {
  const config = parse(readFileSync(join(ROOT, path), "utf8")) as Config;
  const plugins = config.plugins.filter((p) => !ONLY_IN_DEFAULT.has(p.type));
  const typeOf = new Map(config.plugins.map((p) => [p.name ?? p.type, p.type]));
  return {
    plugins: Object.fromEntries(plugins.map((p) => [p.type, p.parameters ?? {}])),
    profiles: config.schedulingProfiles.map((profile) => ({
      name: profile.name,
      steps: profile.plugins
        .map((step) => ({ type: typeOf.get(step.pluginRef), weight: step.weight ?? 1 }))
        .filter((step) => !ONLY_IN_DEFAULT.has(step.type ?? "")),
    })),
  };
}

test("default.yaml routes as ours.yaml: same plugins, parameters and weights", () => {
  assert.deepEqual(
    routing("examples/configs/default.yaml"),
    routing("examples/scenarios/policies/ours.yaml"),
  );
});
