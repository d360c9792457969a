/**
 * The contract every registered data-layer plugin (source, extractor, discovery) must honour, run
 * against each built-in one: it creates from its sample parameters, declares a valid
 * `dataLayerKind` and binds to that extension point only, `configurePool` writes only pool option
 * keys (leaving every other key as it was) with values the pool accepts, the same parameters give
 * the same options, and its schema rejects unknown parameters.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { builtinDefinitions, createSample, SAMPLE_PARAMS } from "../../config/testing.ts";
import { isDataLayerPlugin, pluginKinds } from "../../scheduler/framework/guards.ts";
import { type EndpointPoolOptions, resolvePoolOptions } from "../pool-options.ts";
import { staticSource } from "../sources/static-source.ts";
import { isPoolDataLayerPlugin, type PoolDataLayerPlugin, type PoolOptionsDraft } from "./index.ts";
import type { DataLayerKind } from "./plugin.ts";

const KINDS: readonly DataLayerKind[] = ["data-source", "extractor", "discovery"];

/** Every pool option key; the type makes this list complete and exact. */
const POOL_OPTION_KEYS: Record<keyof EndpointPoolOptions, true> = {
  source: true,
  clock: true,
  scrapeIntervalMs: true,
  stalenessThresholdMs: true,
  modelsIntervalMs: true,
  metricsSpecs: true,
  metricsPath: true,
  healthPath: true,
  metricsPort: true,
  scheme: true,
  insecureSkipVerify: true,
  tlsFiles: true,
  requestTimeoutMs: true,
  unhealthyAfterFailures: true,
  log: true,
  attributeSources: true,
};

const dataLayerTypes = builtinDefinitions()
  .map((d) => d.type)
  .filter((type) => isDataLayerPlugin(createSample(type)));

function configured(type: string, draft: PoolOptionsDraft = {}): PoolOptionsDraft {
  const plugin = createSample(type) as PoolDataLayerPlugin;
  plugin.configurePool(draft);
  return draft;
}

/** A draft with every key but `written` set to a marker object, to see which keys a plugin overwrites. */
function markedDraft(written: PoolOptionsDraft): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(POOL_OPTION_KEYS)
      .filter((key) => !(key in written))
      .map((key) => [key, { marker: key }]),
  );
}

describe("data-layer plugin contract", () => {
  for (const type of dataLayerTypes) {
    test(type, () => {
      const plugin = createSample(type);
      assert.ok(isPoolDataLayerPlugin(plugin), "the endpoint pool can be configured from it");
      assert.ok(KINDS.includes(plugin.dataLayerKind), `kind ${plugin.dataLayerKind}`);
      assert.deepEqual(pluginKinds(plugin), [plugin.dataLayerKind], "bound to its data-layer kind only");

      const draft = configured(type);
      for (const key of Object.keys(draft)) assert.ok(key in POOL_OPTION_KEYS, `wrote unknown key ${key}`);
      assert.doesNotThrow(
        () => resolvePoolOptions({ source: staticSource([]), ...draft }),
        "options accepted",
      );
      assert.deepEqual(Object.keys(configured(type)), Object.keys(draft), "same parameters, same keys");
      assert.equal(JSON.stringify(configured(type)), JSON.stringify(draft), "same parameters, same options");

      const marked = markedDraft(draft);
      configured(type, marked as PoolOptionsDraft);
      for (const [key, value] of Object.entries(marked)) {
        if (key in draft) continue;
        assert.deepEqual(value, { marker: key }, `changed ${key}, which it does not set`);
      }
    });

    test(`${type}: unknown parameters are rejected`, () => {
      const definition = builtinDefinitions().find((d) => d.type === type)!;
      const sample = (SAMPLE_PARAMS[type] ?? {}) as Record<string, unknown>;
      assert.ok(definition.parameters.safeParse(sample).success, "sample parameters accepted");
      const parsed = definition.parameters.safeParse({ ...sample, notAParameter: 1 });
      assert.ok(!parsed.success, "an unknown parameter was accepted");
      assert.ok(
        parsed.error.issues.some((i) => JSON.stringify(i).includes("notAParameter")),
        "the issue names the unknown key",
      );
    });
  }
});

test("no two data-layer types write the same pool option (the pipeline's order cannot matter)", () => {
  const owner = new Map<string, string>();
  for (const type of dataLayerTypes) {
    for (const key of Object.keys(configured(type))) {
      assert.equal(owner.get(key), undefined, `${type} and ${owner.get(key)} both write ${key}`);
      owner.set(key, type);
    }
  }
  assert.ok(owner.size > 0);
});

test("the contract covers every data-layer kind", () => {
  const kinds = new Set(
    dataLayerTypes.map((type) => (createSample(type) as PoolDataLayerPlugin).dataLayerKind),
  );
  assert.deepEqual([...kinds].sort(), [...KINDS].sort());
});
