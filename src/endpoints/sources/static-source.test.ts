import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EndpointMetadata } from "../endpoint.ts";
import { endpointsFromEnv, parseEndpointList, staticSource } from "./static-source.ts";

describe("parseEndpointList", () => {
  it("parses comma and space separated URLs into endpoints keyed default/host:port", () => {
    const list = parseEndpointList("http://127.0.0.1:8001, http://127.0.0.1:8002 localhost:9000");
    assert.deepEqual(
      list.map((e) => [e.key, e.address, e.port]),
      [
        ["default/127.0.0.1:8001", "127.0.0.1", 8001],
        ["default/127.0.0.1:8002", "127.0.0.1", 8002],
        ["default/localhost:9000", "localhost", 9000],
      ],
    );
  });

  it("unbrackets IPv6 addresses and defaults the port to 80", () => {
    const [v6, plain] = parseEndpointList("http://[::1]:8000,http://example.test");
    assert.deepEqual([v6!.address, v6!.port, plain!.port], ["::1", 8000, 80]);
  });

  for (const bad of ["ftp://x:1", "http://x:1/v1", "http://a:1,http://a:1", "http://:80"]) {
    it(`rejects ${bad}`, () => assert.throws(() => parseEndpointList(bad), { name: "LlmdError" }));
  }
});

describe("endpointsFromEnv", () => {
  it("reads LLMD_ENDPOINTS and returns undefined when unset or blank", () => {
    assert.equal(endpointsFromEnv({}), undefined);
    assert.equal(endpointsFromEnv({ LLMD_ENDPOINTS: "  " }), undefined);
    assert.equal(
      endpointsFromEnv({ LLMD_ENDPOINTS: "http://10.0.0.1:8000" })?.[0]?.key,
      "default/10.0.0.1:8000",
    );
  });
});

describe("staticSource", () => {
  it("delivers its set once on start", async () => {
    const seen: (readonly EndpointMetadata[])[] = [];
    const source = staticSource(parseEndpointList("http://127.0.0.1:1"));
    await source.start((set) => seen.push(set));
    await source.stop();
    assert.equal(seen.length, 1);
    assert.equal(seen[0]![0]!.port, 1);
  });
});
