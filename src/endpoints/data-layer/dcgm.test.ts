/** dcgm-data-source and dcgm-extractor: llm-d's parameters, the attribute source they configure, and the extraction rule. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfig } from "../../config/load.ts";
import { endpointPoolOptionsFromConfig } from "../../config/pool-options.ts";
import { makeEnv } from "../../scheduler/framework/testing.ts";
import { parseEndpointList } from "../sources/static-source.ts";
import { dcgmDataSource, dcgmExtractor } from "./dcgm.ts";

const metadata = parseEndpointList("10.0.0.7:8000")[0]!;
const extractor = dcgmExtractor.create({}, makeEnv("dcgm")) as unknown as {
  extract(text: string, m: typeof metadata, attributes: Map<string, unknown>): number;
};

function extract(text: string, pod = metadata.name): [number, unknown] {
  const attributes = new Map<string, unknown>();
  const errors = extractor.extract(text, { ...metadata, name: pod }, attributes);
  return [errors, attributes.get("dcgm/GPUUtilization")];
}

const line = (gpu: number, value: number, pod?: string) =>
  `DCGM_FI_DEV_GPU_UTIL{gpu="${gpu}",UUID="GPU-${gpu}"${pod ? `,pod="${pod}"` : ""}} ${value}`;

test("the busiest GPU of the endpoint's pod, / 100; samples without a pod label count (sidecar)", () => {
  assert.deepEqual(
    extract([line(0, 35), line(1, 80), 'DCGM_FI_DEV_FB_USED{gpu="0"} 9000'].join("\n")),
    [0, 0.8],
  );
  const daemonSet = [line(0, 90, "other-pod"), line(1, 20, "me"), line(2, 40, "me")].join("\n");
  assert.deepEqual(extract(daemonSet, "me"), [0, 0.4]);
});

test("no sample for the endpoint is an extract error and leaves the attribute unset", () => {
  assert.deepEqual(extract("DCGM_FI_DEV_FB_USED 1\n"), [1, undefined]);
  assert.deepEqual(extract(line(0, 50, "other-pod"), "me"), [1, undefined]);
});

test("dcgm-data-source: llm-d's defaults; useNodeAddress is refused with the reason", () => {
  assert.deepEqual(dcgmDataSource.parameters.parse({}), {
    scheme: "http",
    path: "/metrics",
    port: 9400,
    insecureSkipVerify: true,
  });
  const parsed = dcgmDataSource.parameters.safeParse({ useNodeAddress: true });
  assert.ok(!parsed.success);
  assert.match(parsed.error.issues[0]!.message, /no node address/);
  assert.ok(!dcgmDataSource.parameters.safeParse({ port: 0 }).success);
});

test("wired in dataLayer, the source polls with its extractors; an unwired extractor is refused", () => {
  const config = (extractorType: string) => `apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- {type: dcgm-data-source, name: gpu, parameters: {port: "9500", interval: 2s, scheme: https}}
- {type: ${extractorType}, name: x}
- {type: queue-scorer}
dataLayer:
  sources: [{pluginRef: gpu, extractors: [{pluginRef: x}]}]
`;
  const ok = parseConfig(config("dcgm-extractor"), { allowExperimentalPlugins: true });
  assert.ok(ok.ok, ok.ok ? "" : JSON.stringify(ok.issues));
  const options = endpointPoolOptionsFromConfig(ok.config, { endpoints: [metadata] });
  const [source] = options.attributeSources!;
  assert.deepEqual(
    { ...source, extractors: source!.extractors.length },
    {
      name: "gpu",
      scheme: "https",
      path: "/metrics",
      port: 9500,
      insecureSkipVerify: true,
      intervalMs: 2000,
      extractors: 1,
    },
  );
  const bad = parseConfig(config("core-metrics-extractor"), { allowExperimentalPlugins: true });
  assert.ok(!bad.ok);
  assert.match(
    bad.issues.map((i) => i.message).join("\n"),
    /cannot read what "gpu" \(dcgm-data-source\) fetches/,
  );
});
