import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "./issues.ts";
import { loadConfig, parseConfig } from "./load.ts";

const doc = (body: string, apiVersion = "llm-d.ai/v1") =>
  `apiVersion: ${apiVersion}\nkind: EndpointPickerConfig\n${body}`;
const issuesOf = (text: string, options = {}) => {
  const result = parseConfig(text, options);
  assert.ok(!result.ok, "expected the config to be rejected");
  return result.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
};

test("errors name the path, what was expected and what was found", () => {
  const text = doc(`plugins:
- type: queue-scorer
- type: decode-filter
- type: max-score-picker
- type: random-picker
  parameters: {maxNumOfEndpoints: -64}`);
  assert.deepEqual(issuesOf(text), [
    "plugins[3].parameters.maxNumOfEndpoints: expected a positive integer, got -64",
  ]);
  const zodDefault = doc(
    "plugins: [{type: approx-prefix-cache-producer, parameters: {maxPrefixTokensToMatch: -1}}]",
  );
  assert.match(
    issuesOf(zodDefault).join(),
    /^plugins\[0\]\.parameters\.maxPrefixTokensToMatch: expected .*, got -1$/,
  );
});

test("unknown fields are rejected at every level", () => {
  assert.deepEqual(issuesOf(doc("plugin: []")), [
    'plugin: unknown field(s) "plugin"'.replace("plugin: ", ""),
  ]);
  assert.deepEqual(issuesOf(doc("plugins:\n- {type: queue-scorer, parameters: {foo: 1}}")), [
    'plugins[0].parameters: unknown field(s) "foo"',
  ]);
  assert.deepEqual(issuesOf(doc("schedulingProfiles:\n- {name: p, plugins: [{pluginRef: x, wieght: 2}]}")), [
    'schedulingProfiles[0].plugins[0]: unknown field(s) "wieght"',
  ]);
});

test("apiVersion and kind are checked; older apiVersions load with a deprecation warning", () => {
  assert.match(issuesOf(doc("", "example.com/v9")).join(), /expected apiVersion one of llm-d.ai\/v1/);
  assert.match(
    issuesOf("apiVersion: llm-d.ai/v1\nkind: Deployment\n").join(),
    /kind: expected "EndpointPickerConfig"/,
  );
  for (const v of ["llm-d.ai/v1alpha1", "inference.networking.x-k8s.io/v1alpha1"]) {
    const config = loadConfig(doc("plugins: [{type: queue-scorer}]", v));
    assert.match(config.warnings.join(), /deprecated/);
  }
});

test("no profiles → a default profile with every filter, scorer and picker; handler and picker defaulted", () => {
  const config = loadConfig(
    doc("plugins: [{type: decode-filter}, {type: queue-scorer}, {type: kv-cache-utilization-scorer}]"),
  );
  const { profiles, profileHandler } = config.scheduler.parts;
  const profile = profiles.get("default")!;
  assert.deepEqual(
    profile.filters.map((f) => f.name),
    ["decode-filter"],
  );
  assert.deepEqual(
    profile.scorers.map((s) => [s.scorer.name, s.weight]),
    [
      ["queue-scorer", 1],
      ["kv-cache-utilization-scorer", 1],
    ],
  );
  assert.equal(profile.picker.type, "max-score-picker");
  assert.equal(profileHandler.type, "single-profile-handler");
});

test("profile rules: one picker, known refs, a handler for several profiles, one handler", () => {
  const twoPickers = doc(`plugins: [{type: max-score-picker}, {type: random-picker}]
schedulingProfiles: [{name: p, plugins: [{pluginRef: max-score-picker}, {pluginRef: random-picker}]}]`);
  assert.match(issuesOf(twoPickers).join(), /more than one picker/);
  const missing = doc("plugins: []\nschedulingProfiles: [{name: p, plugins: [{pluginRef: nope}]}]");
  assert.deepEqual(issuesOf(missing), [
    'schedulingProfiles[0].plugins[0].pluginRef: no plugin named "nope" in plugins',
  ]);
  const twoProfiles = doc("plugins: [{type: queue-scorer}]\nschedulingProfiles: [{name: a}, {name: b}]");
  assert.match(issuesOf(twoProfiles).join(), /2 profiles need a profile handler/);
  const twoHandlers = doc(
    "plugins: [{type: single-profile-handler}, {type: single-profile-handler, name: h2}]",
  );
  assert.match(issuesOf(twoHandlers).join(), /only one profile handler is allowed/);
  const producerInProfile = doc(
    "plugins: [{type: token-producer}]\nschedulingProfiles: [{name: p, plugins: [{pluginRef: token-producer}]}]",
  );
  assert.match(issuesOf(producerInProfile).join(), /is not a filter, scorer or picker/);
});

test("duplicate names, unknown and unimplemented types", () => {
  assert.match(
    issuesOf(doc("plugins: [{type: queue-scorer}, {type: queue-scorer}]")).join(),
    /duplicate plugin name "queue-scorer"/,
  );
  assert.match(issuesOf(doc("plugins: [{type: magic-scorer}]")).join(), /unknown plugin type "magic-scorer"/);
  const result = parseConfig(doc("plugins: [{type: pd-profile-handler, name: pd}]"));
  assert.ok(!result.ok);
  assert.equal(result.issues[0]!.unimplementedType, "pd-profile-handler");
  assert.match(
    result.issues[0]!.message,
    /plugin "pd": type "pd-profile-handler" is not implemented in llmd \(P\/D beyond disagg-profile-handler \(not built/,
  );
});

test("alpha plugins need allowExperimentalPlugins; deprecated aliases warn", () => {
  const alpha = doc(
    "plugins: [{type: utilization-filter, parameters: {conditions: [{metric: waiting-queue, maxValue: 3}]}}]",
  );
  assert.match(issuesOf(alpha).join(), /alpha; enable it with --allow-experimental-plugins/);
  assert.ok(loadConfig(alpha, { allowExperimentalPlugins: true }).plugins.has("utilization-filter"));
  const alias = loadConfig(doc("plugins: [{type: by-label-selector}]"));
  assert.match(alias.warnings.join(), /"by-label-selector" is deprecated, use "label-selector-filter"/);
});

test("default producers are auto-added for consumed data and run before their consumers", () => {
  const config = loadConfig(doc("plugins: [{type: prefix-cache-scorer}, {type: token-load-scorer}]"));
  const order = config.scheduler.parts.producers.map((p) => p.type);
  assert.deepEqual(order, ["approx-prefix-cache-producer", "inflight-load-producer"]);
  const explicit = loadConfig(doc("plugins: [{type: queue-scorer}]"));
  assert.equal(explicit.scheduler.parts.producers.length, 0, "nothing consumed, nothing added");
  const precise = loadConfig(
    doc("plugins: [{type: precise-prefix-cache-producer}, {type: precise-prefix-cache-scorer}]"),
  );
  assert.deepEqual(
    precise.scheduler.parts.producers.map((p) => p.type),
    ["token-producer", "precise-prefix-cache-producer"],
    "a consumer that needs tokens gets the token producer, first",
  );
});

test("data a plugin only uses is read when configured but never auto-added", () => {
  const listed = loadConfig(doc("plugins: [{type: prefix-cache-scorer}, {type: token-producer}]"));
  assert.deepEqual(
    listed.scheduler.parts.producers.map((p) => p.type),
    ["token-producer", "approx-prefix-cache-producer"],
    "a configured token producer runs before the prefix producer that uses its tokens",
  );
});

test("feature gates: known gates, name=value forms, unknown rejected", () => {
  assert.deepEqual(loadConfig(doc("")).featureGates, {
    flowControl: false,
    haPopulateNonLeaderDatastore: true,
  });
  const gates = loadConfig(
    doc("featureGates: [flowControl, haPopulateNonLeaderDatastore=false]"),
  ).featureGates;
  assert.deepEqual(gates, { flowControl: true, haPopulateNonLeaderDatastore: false });
  assert.match(issuesOf(doc("featureGates: [warpDrive]")).join(), /unknown feature gate "warpDrive"/);
  assert.match(issuesOf(doc("featureGates: [flowControl=maybe]")).join(), /expected "flowControl"/);
});

test("flowControl is validated by flow control's schema and refs must name plugins", () => {
  const on = loadConfig(doc("featureGates: [flowControl]"));
  assert.equal(on.flowControl?.defaultRequestTTL, 60_000);
  assert.ok(on.plugins.has("utilization-detector"), "default detector created");
  assert.equal(loadConfig(doc("")).flowControl, undefined);
  assert.match(issuesOf(doc("flowControl: {maxRequests: many}")).join(), /^flowControl.maxRequests: /);
  assert.match(
    issuesOf(doc("flowControl: {usageLimitPolicyPluginRef: ghost}")).join(),
    /flowControl.usageLimitPolicyPluginRef: no plugin named "ghost"/,
  );
});

test("v1alpha1 data layer is normalised to the v1 shape; refs are checked", () => {
  const text = doc(
    "plugins: [{type: file-discovery, name: files, parameters: {path: /etc/eps.yaml}}]\ndataLayer: {discovery: {pluginRef: files}}",
    "llm-d.ai/v1alpha1",
  );
  assert.deepEqual(loadConfig(text).dataLayer?.discovery, { endpoints: { pluginRef: "files" } });
  assert.match(
    issuesOf(doc("dataLayer: {sources: [{pluginRef: nope}]}")).join(),
    /dataLayer.sources\[0\].pluginRef: no plugin named "nope"/,
  );
});

test("the runtime is frozen and loadConfig throws one ConfigError listing every issue", () => {
  const config = loadConfig(doc("plugins: [{type: queue-scorer}]"));
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.featureGates));
  assert.throws(
    () => loadConfig(doc("plugins: [{type: magic-scorer}, {type: other-scorer}]")),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.issues.length === 2 &&
      /magic-scorer[\s\S]*other-scorer/.test(err.message),
  );
  assert.match(issuesOf("plugins: [").join(), /not valid YAML/);
});
