/**
 * examples/configs/default.yaml (what `llmd router` runs without --config) is the `ours` policy
 * the fleet benchmarks measure (examples/scenarios/policies/ours.yaml), plus two plugins that
 * change no decision in those runs: decode-filter (keeps every endpoint without P/D roles) and
 * response-chain-scorer (scores 0 everywhere unless a Responses turn continues a chain its
 * prefix index does not know). The measured numbers hold for the default only while the rest is
 * equal, plugin for plugin. examples/configs/precise.yaml is the default with the precise prefix
 * producer in place of the approximate one, so comparing the two measures the index alone.
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

/** A config's routing with its prefix producer's choice and the references to it left out. */
function routingBesidesPrefixProducer(path: string) {
  const { plugins, profiles } = routing(path);
  const kept = Object.entries(plugins)
    .filter(([type]) => !type.endsWith("-prefix-cache-producer"))
    .map(([type, parameters]) => {
      const { prefixMatchInfoProducerName: _, ...rest } = parameters as Record<string, unknown>;
      return [type, rest];
    });
  return { plugins: Object.fromEntries(kept), profiles };
}

test("precise.yaml is default.yaml with the approximate prefix producer swapped for the precise one", () => {
  const precise = routing("examples/configs/precise.yaml").plugins;
  assert.ok("precise-prefix-cache-producer" in precise && !("approx-prefix-cache-producer" in precise));
  assert.deepEqual(
    routingBesidesPrefixProducer("examples/configs/precise.yaml"),
    routingBesidesPrefixProducer("examples/configs/default.yaml"),
  );
});
