/**
 * The five P/D sample configs llm-d ships route as their comments describe: each is loaded
 * unchanged from ../shared/data/llm-d-configs and driven through prepare → schedule → preRequest
 * over a pool of role-labelled endpoints; the test checks which stages ran, which endpoint each
 * picked, that decode is primary, and the upstream headers the decode side receives.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { LlmdError } from "../../src/api/errors.ts";
import { parseConfig, type RuntimeConfig } from "../../src/config/load.ts";
import { type Endpoint, ROLE_LABEL } from "../../src/endpoints/endpoint.ts";
import { UPSTREAM_HEADERS_STATE_KEY } from "../../src/scheduler/framework/data-keys.ts";
import { makeContext, makeEndpoint } from "../../src/scheduler/framework/testing.ts";

const DIR = join(import.meta.dirname, "../../../shared/data/llm-d-configs");
const ZONE = "topology.kubernetes.io/zone";

function load(file: string): RuntimeConfig {
  const result = parseConfig(readFileSync(join(DIR, file), "utf8"), {
    allowExperimentalPlugins: file === "pd-topology-epp-config.yaml",
  });
  assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.issues));
  return result.config;
}

let nextPort = 8000;
const at = (name: string, role: string, labels: Record<string, string> = {}) =>
  makeEndpoint(name, {
    labels: { [ROLE_LABEL]: role, ...labels },
    port: nextPort++,
    metrics: { cacheBlockSize: 16, cacheNumBlocks: 10_000 },
  });

/** Chat body with an image part (multimodal) or plain text. */
const chat = (text: string, image: boolean) => ({
  model: "m",
  messages: [
    {
      role: "user",
      content: image
        ? [
            { type: "text", text },
            { type: "image_url", image_url: { url: "data:," } },
          ]
        : text,
    },
  ],
});

interface Routed {
  /** Profile → picked endpoint name, for the profiles that picked. */
  picks: Record<string, string>;
  primary: string;
  headers: Record<string, string>;
}

/** One request through the full scheduling lifecycle. `tokens` prompt tokens, 4 characters each. */
function route(config: RuntimeConfig, pool: Endpoint[], tokens: number, image = false, seed = "a"): Routed {
  const promptText = `${seed} `.repeat(tokens * 2);
  const ctx = makeContext({
    path: "/v1/chat/completions",
    promptText,
    inputTokens: tokens,
    body: chat(promptText, image),
  });
  assert.equal(config.scheduler.prepare(ctx, pool), undefined);
  const result = config.scheduler.schedule(ctx, pool);
  assert.ok(!(result instanceof LlmdError), String(result));
  config.scheduler.preRequest(ctx, result);
  const picks: Record<string, string> = {};
  for (const [profile, run] of result.profileResults) {
    const first = run?.targetEndpoints[0];
    if (first) picks[profile] = first.metadata.name;
  }
  const headers = Object.fromEntries(
    (ctx.state.get(UPSTREAM_HEADERS_STATE_KEY) as Map<string, string> | undefined) ?? [],
  );
  return { picks, primary: result.primaryProfileName, headers };
}

const hostPort = (e: Endpoint) => `${e.metadata.address}:${e.metadata.port}`;
const named = (pool: Endpoint[], name: string) => pool.find((e) => e.metadata.name === name)!;

for (const file of ["pd-epp-config.yaml", "sim-pd-epp-config.yaml"]) {
  test(`${file}: P/D only when the uncached prompt on the decode pick is ≥ nonCachedTokens (16)`, () => {
    const config = load(file);
    const pool = [
      at("prefill-0", "prefill"),
      at("prefill-1", "prefill"),
      at("decode-0", "decode"),
      at("decode-1", "decode"),
    ];
    const cold = route(config, pool, 640);
    assert.equal(cold.primary, "decode", "decode is primary: the request is sent to the decode pod");
    assert.match(cold.picks.decode!, /^decode-/);
    assert.match(cold.picks.prefill!, /^prefill-/);
    assert.deepEqual(cold.headers, { "x-prefiller-host-port": hostPort(named(pool, cold.picks.prefill!)) });

    // The same prompt again: the prefix scorer sends it to the same decode pod, which now holds
    // all 640 tokens (the optimistic insert at PreRequest), so nothing is left to prefill remotely.
    const warm = route(config, pool, 640);
    assert.equal(warm.picks.decode, cold.picks.decode);
    assert.deepEqual(warm.picks, { decode: cold.picks.decode });
    assert.deepEqual(warm.headers, {});

    const short = route(config, pool, 15, false, "b");
    assert.deepEqual(Object.keys(short.picks), ["decode"], "15 uncached tokens < 16: decode only");
    assert.deepEqual(short.headers, {});
    const atThreshold = route(config, pool, 16, false, "c");
    assert.deepEqual(Object.keys(atThreshold.picks).sort(), ["decode", "prefill"], "16 ≥ 16: P/D");
  });
}

test("pd-topology-epp-config.yaml: the prefill pick is the prefill pod nearest the decode pick", () => {
  const config = load("pd-topology-epp-config.yaml");
  // Hostnames default to pod names, so no two pods share a host: the host-tier filter fails open
  // and the scorer's zone tier (0.05) decides among otherwise equal prefill pods.
  const prefills = [
    at("prefill-a", "prefill", { [ZONE]: "zone-b" }),
    at("prefill-b", "prefill", { [ZONE]: "zone-a" }),
    at("prefill-c", "prefill", { [ZONE]: "zone-c" }),
  ];
  for (const decode of [
    at("decode-a", "decode", { [ZONE]: "zone-a" }),
    at("decode-c", "decode", { [ZONE]: "zone-c" }),
  ]) {
    const pool = [...prefills, decode];
    for (const seed of ["s", "t", "u"]) {
      const routed = route(config, pool, 640, false, `${decode.metadata.name}-${seed}`);
      assert.equal(routed.primary, "decode");
      assert.equal(routed.picks.decode, decode.metadata.name);
      const prefill = named(pool, routed.picks.prefill!);
      assert.equal(
        prefill.metadata.labels[ZONE],
        decode.metadata.labels[ZONE],
        `${seed}: same zone as decode`,
      );
      assert.deepEqual(routed.headers, { "x-prefiller-host-port": hostPort(prefill) });
    }
  }
});

test("sim-e-pd-epp-config.yaml: encode stage only for multimodal requests; prefill-decode pods decode", () => {
  const config = load("sim-e-pd-epp-config.yaml");
  const pool = [at("encode-0", "encode"), at("pd-0", "prefill-decode"), at("prefill-0", "prefill")];
  const image = route(config, pool, 100, true);
  assert.deepEqual(image.picks, { decode: "pd-0", encode: "encode-0" });
  assert.equal(image.primary, "decode");
  assert.deepEqual(image.headers, { "x-encoder-hosts-ports": hostPort(named(pool, "encode-0")) });
  const text = route(config, pool, 100, false);
  assert.deepEqual(text.picks, { decode: "pd-0" });
  assert.deepEqual(text.headers, {});
});

test("sim-e-p-d-epp-config.yaml: encode for multimodal, prefill for ≥ 16 uncached tokens, decode always", () => {
  const config = load("sim-e-p-d-epp-config.yaml");
  const pool = [at("encode-0", "encode"), at("prefill-0", "prefill"), at("decode-0", "decode")];
  const cases = [
    { tokens: 640, image: true, seed: "a", want: ["decode", "encode", "prefill"] },
    { tokens: 640, image: false, seed: "b", want: ["decode", "prefill"] },
    { tokens: 8, image: true, seed: "c", want: ["decode", "encode"] },
    { tokens: 8, image: false, seed: "d", want: ["decode"] },
  ];
  for (const c of cases) {
    const routed = route(config, pool, c.tokens, c.image, c.seed);
    assert.deepEqual(Object.keys(routed.picks).sort(), c.want, JSON.stringify(c));
    assert.equal(routed.picks.decode, "decode-0");
    assert.equal(routed.primary, "decode");
    assert.equal(
      routed.headers["x-prefiller-host-port"],
      c.want.includes("prefill") ? hostPort(pool[1]!) : undefined,
    );
    assert.equal(routed.headers["x-encoder-hosts-ports"], c.image ? hostPort(pool[0]!) : undefined);
  }
});
