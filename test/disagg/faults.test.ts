/**
 * P/D failure behaviour through real processes on loopback (docs/disaggregation.md, "Failure
 * behaviour"): a prefill target outside the pool is refused (403), a prefill simulator killed
 * between requests is left for another prefill endpoint when the router runs the legs and answered
 * 502 `prefill_unreachable` by the sidecar, and `llmd sidecar` itself starts, serves and drains as
 * a process, refusing connectors other than nixlv2.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { parseEndpointList, staticSource } from "../../src/endpoints/sources/static-source.ts";
import type { Router } from "../../src/gateway/router.ts";
import { PoolAllowList } from "../../src/gateway/prefill-allow-list.ts";
import { type Sidecar, startSidecar } from "../../src/gateway/sidecar.ts";
import type { SimServer } from "../../src/sim/server.ts";
import {
  eventually,
  exitOf,
  MODEL,
  routerFor,
  type SimProcess,
  spawnSim,
  stopChild,
} from "../router/harness.ts";
import { type InspectionProxy, startInspectionProxy } from "./inspection-proxy.ts";
import { NIXL, nixlSims, PD_CONFIG, roleEndpoint } from "./pd-stack.ts";

const RETRY = { maxRetries: 0, backoffMs: 10 };
const hostPort = (url: string) => url.slice("http://".length);
let n = 0;
const chat = (max_tokens = 2) => ({
  model: MODEL,
  messages: [{ role: "user", content: `${n++} ${"a long prompt that needs a prefill ".repeat(20)}` }],
  max_tokens,
});

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { error?: { code: string; message: string } } };
}

describe("SSRF protection: prefill legs only to the pool", () => {
  let prefill: SimServer;
  let decode: SimServer;
  let outside: InspectionProxy;
  let sidecar: Sidecar;
  let allowList: PoolAllowList;
  before(async () => {
    [prefill, decode] = (await nixlSims(["p", "d"])) as [SimServer, SimServer];
    outside = await startInspectionProxy(prefill.url);
    allowList = new PoolAllowList(staticSource(parseEndpointList(prefill.url)));
    await allowList.start();
    const modelServerPort = Number(new URL(decode.url).port);
    sidecar = await startSidecar({ port: 0, modelServerPort, retry: RETRY, allowList });
  });
  after(async () => {
    await sidecar.close();
    await Promise.all([outside.close(), prefill.close(), decode.close(), allowList.stop()]);
  });

  it("a target outside the pool is 403 prefill_forbidden and never contacted", async () => {
    const refused = await post(sidecar.urls[0]!, chat(), { "x-prefiller-host-port": hostPort(outside.url) });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error?.code, "prefill_forbidden");
    assert.equal(outside.seen.length, 0);
    const served = await post(sidecar.urls[0]!, chat(), { "x-prefiller-host-port": hostPort(prefill.url) });
    assert.equal(served.status, 200);
  });

  it("a malformed prefill header is 400", async () => {
    const bad = await post(sidecar.urls[0]!, chat(), { "x-prefiller-host-port": "http://x/y" });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error?.message ?? "", /x-prefiller-host-port/);
  });
});

/**
 * Two prefill endpoints, the first a `llmd sim` process killed between requests, and a router that
 * scrapes once a minute, so the pool still lists the dead one when the next requests arrive.
 */
async function deadPrefillStack(legs: "sidecar" | "router") {
  // Both prefill servers alike, so the scorers tie and the picker rotates between them.
  const prefillSim = (id: string) =>
    spawnSim([
      "--kv-transfer-config",
      JSON.stringify({ ...NIXL, engine_id: id }),
      "--time-to-first-token",
      "5ms",
    ]);
  const [doomed, survivor] = await Promise.all([prefillSim("doomed"), prefillSim("survivor")]);
  const [decode] = (await nixlSims(["decode"])) as [SimServer];
  const modelServerPort = Number(new URL(decode.url).port);
  const sidecar =
    legs === "sidecar" ? await startSidecar({ port: 0, modelServerPort, retry: RETRY }) : undefined;
  const log: string[] = [];
  const router = await routerFor([], PD_CONFIG, {
    endpoints: [
      roleEndpoint("doomed", "prefill", doomed.url),
      roleEndpoint("survivor", "prefill", survivor.url),
      roleEndpoint("decode", "decode", sidecar?.urls[0] ?? decode.url),
    ],
    pd: { legs, retry: RETRY },
    scrapeIntervalMs: 60_000,
    log: (_level, message) => log.push(message),
  });
  assert.ok(await eventually(() => router.pool.candidates().length === 3));
  return { doomed, survivor, decode, sidecar, router, log };
}

async function closeStack(s: {
  doomed: SimProcess;
  survivor: SimProcess;
  decode: SimServer;
  sidecar: Sidecar | undefined;
  router: Router;
}) {
  await s.router.close();
  await s.sidecar?.close();
  await s.decode.close();
  await stopChild(s.survivor.child);
  if (s.doomed.child.exitCode === null) await stopChild(s.doomed.child);
}

describe("a prefill simulator killed between requests", () => {
  it("router-run legs: the request moves to the other prefill endpoint, nothing is lost", async () => {
    const s = await deadPrefillStack("router");
    try {
      assert.equal((await post(s.router.url, chat())).status, 200);
      s.doomed.child.kill("SIGKILL");
      await exitOf(s.doomed.child);
      const dead = hostPort(s.doomed.url);
      for (let i = 0; i < 6 && !s.log.some((l) => l.includes(dead)); i++) {
        const { status } = await post(s.router.url, chat());
        assert.equal(status, 200, "every request is served");
      }
      assert.ok(
        s.log.some((l) => l.includes(`prefill ${dead}`)),
        "a request was placed on the dead one",
      );
      assert.ok(!s.router.pool.candidates().some((e) => e.metadata.name === "doomed"), "out of the pool");
      for (let i = 0; i < 3; i++) assert.equal((await post(s.router.url, chat())).status, 200);
    } finally {
      await closeStack(s);
    }
  });

  it("sidecar legs: the sidecar answers 502 prefill_unreachable naming the endpoint", async () => {
    const s = await deadPrefillStack("sidecar");
    try {
      assert.equal((await post(s.router.url, chat())).status, 200);
      s.doomed.child.kill("SIGKILL");
      await exitOf(s.doomed.child);
      const answers: { status: number; code: string | undefined; message: string | undefined }[] = [];
      while (answers.length < 6 && !answers.some((a) => a.status === 502)) {
        const { status, json } = await post(s.router.url, chat());
        answers.push({ status, code: json.error?.code, message: json.error?.message });
      }
      const failed = answers.filter((a) => a.status !== 200);
      assert.equal(failed.length, 1, JSON.stringify(answers));
      assert.equal(failed[0]?.code, "prefill_unreachable");
      assert.match(failed[0]?.message ?? "", new RegExp(hostPort(s.doomed.url)));
    } finally {
      await closeStack(s);
    }
  });
});

describe("a decode simulator killed mid-stream behind the sidecar", () => {
  it("the stream ends with an error event, and the next request is answered 502 by the sidecar", async () => {
    const [prefill] = (await nixlSims(["p"])) as [SimServer];
    const decode = await spawnSim([
      "--kv-transfer-config",
      JSON.stringify(NIXL),
      "--inter-token-latency",
      "20ms",
    ]);
    const sidecar = await startSidecar({
      port: 0,
      modelServerPort: Number(new URL(decode.url).port),
      retry: RETRY,
    });
    const url = sidecar.urls[0] as string;
    const headers = { "content-type": "application/json", "x-prefiller-host-port": hostPort(prefill.url) };
    try {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers,
        body: JSON.stringify({ ...chat(200), stream: true }),
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let text = new TextDecoder().decode((await reader.read()).value);
      decode.child.kill("SIGKILL");
      for (let r = await reader.read(); !r.done; r = await reader.read())
        text += new TextDecoder().decode(r.value);
      assert.match(text, /data: \{"error":\{[^\n]*"code":"upstream_failed"/);
      assert.doesNotMatch(text, /\[DONE\]/);
      const next = await post(url, chat(), headers);
      assert.equal(next.status, 502);
      assert.equal(next.json.error?.code, "upstream_failed");
      assert.match(next.json.error?.message ?? "", /model server at http:\/\/127\.0\.0\.1/);
    } finally {
      await sidecar.close();
      await prefill.close();
      if (decode.child.exitCode === null) decode.child.kill("SIGKILL");
    }
  });
});

const CLI_BIN = fileURLToPath(new URL("../../bin/llmd.js", import.meta.url));

function runSidecar(args: readonly string[]): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [CLI_BIN, "sidecar", "--host", "127.0.0.1", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    err += c.toString();
  });
  return { child, out: () => out, err: () => err };
}

describe("llmd sidecar as a process", () => {
  it("refuses a connector other than nixlv2, and SSRF protection without a pool", async () => {
    const connector = runSidecar(["--kv-connector", "shared-storage"]);
    assert.equal(await exitOf(connector.child), 1);
    assert.match(connector.err(), /llmd: invalid_option: --kv-connector: only nixlv2 is supported/);
    const ssrf = runSidecar(["--enable-ssrf-protection"]);
    assert.equal(await exitOf(ssrf.child), 1);
    assert.match(ssrf.err(), /--enable-ssrf-protection: name the allowed pool/);
  });

  it("serves both legs, proxies the rest, and drains on SIGTERM", async () => {
    const [prefill, decode] = (await nixlSims(["p", "d"])) as [SimServer, SimServer];
    const sidecar = runSidecar([
      "--vllm-port",
      new URL(decode.url).port,
      "--enable-ssrf-protection",
      "--endpoints",
      prefill.url,
    ]);
    try {
      assert.ok(await eventually(() => /listening on http/.test(sidecar.out()), 20_000), sidecar.err());
      const url = /listening on (http:\/\/\S+)/.exec(sidecar.out())?.[1] as string;
      assert.equal((await fetch(`${url}/health`)).status, 200);
      const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
      assert.equal(models.data[0]?.id, MODEL, "proxied to the decode server");
      const served = await post(url, chat(), { "x-prefiller-host-port": hostPort(prefill.url) });
      assert.equal(served.status, 200);
      sidecar.child.kill("SIGTERM");
      assert.equal(await exitOf(sidecar.child), 0);
    } finally {
      if (sidecar.child.exitCode === null) sidecar.child.kill("SIGKILL");
      await Promise.all([prefill.close(), decode.close()]);
    }
  });
});
