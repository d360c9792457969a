import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_ENDPOINTS_FILE_BYTES, parseEndpointsFile } from "./endpoints-file.ts";

describe("parseEndpointsFile", () => {
  it("reads llm-d's file-discovery format", () => {
    const text = `endpoints:
- {name: vllm-0, namespace: prod, address: 10.0.0.5, port: "8000", labels: {llm-d.ai/role: decode, zone: 3}}
- name: vllm-1
  address: 10.0.0.6
  port: 8000
`;
    const [first, second] = parseEndpointsFile(text);
    assert.deepEqual(first, {
      key: "prod/vllm-0",
      name: "vllm-0",
      namespace: "prod",
      address: "10.0.0.5",
      port: 8000,
      labels: { "llm-d.ai/role": "decode", zone: "3" },
    });
    assert.equal(second!.key, "default/vllm-1");
    assert.deepEqual(second!.labels, {});
  });

  it("turns a port list into one endpoint per data-parallel rank", () => {
    const ranks = parseEndpointsFile('endpoints: [{name: dp, address: 10.0.0.7, port: "8000, 8001,8002"}]');
    assert.deepEqual(
      ranks.map((r) => [r.key, r.port, r.dpRank]),
      [
        ["default/dp-rank-0", 8000, 0],
        ["default/dp-rank-1", 8001, 1],
        ["default/dp-rank-2", 8002, 2],
      ],
    );
  });

  it("accepts an empty list", () => {
    assert.deepEqual(parseEndpointsFile("endpoints: []"), []);
  });

  const invalid: [string, RegExp][] = [
    ["", /\(root\)/],
    ["endpoints: [{name: a, address: b, port: '70000'}]", /endpoints\[0\]\.port/],
    ["endpoints: [{name: a, address: b, port: '80', extra: 1}]", /endpoints\[0\]/],
    ["endpoints: [{name: a, port: '80'}]", /endpoints\[0\]\.address/],
    ["endpoints: [{name: a, address: b, port: '1'}, {name: a, address: c, port: '2'}]", /duplicate/],
    ["endpoints: [oops", /not YAML/],
    [`endpoints: []\n#${"x".repeat(MAX_ENDPOINTS_FILE_BYTES)}`, /larger than/],
  ];
  for (const [text, message] of invalid) {
    it(`rejects ${JSON.stringify(text.slice(0, 60))}`, () => {
      assert.throws(
        () => parseEndpointsFile(text),
        (err: Error) => err.name === "LlmdError" && message.test(err.message),
      );
    });
  }
});
