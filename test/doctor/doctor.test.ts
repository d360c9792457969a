/**
 * `llmd doctor` against real simulators on loopback: a correct P/D stack passes (from an endpoints
 * file and from a running router, through the CLI), and each planted misconfiguration is found
 * and named: wrong role label, mismatched connector, unreachable prefill, a shared engine id, a
 * model mismatch, a prefill whose kv_role cannot serve prefill legs, a side channel decode cannot reach.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { runDoctor } from "../../src/doctor/doctor.ts";
import type { Finding } from "../../src/doctor/findings.ts";
import { endpointsFromFile } from "../../src/doctor/inventory.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, startSims } from "../router/harness.ts";
import { startRouter, type Router } from "../../src/gateway/router.ts";
import { freePort } from "../../src/core/free-port.ts";

const CLI = fileURLToPath(new URL("../../bin/llmd.js", import.meta.url));
const transfer = (role: string, connector = "NixlConnector", engineId?: string) =>
  JSON.stringify({ kv_connector: connector, kv_role: role, ...(engineId ? { engine_id: engineId } : {}) });

const dir = mkdtempSync(join(tmpdir(), "llmd-doctor-"));
const sims: Record<string, SimServer> = {};
let router: Router | undefined;
let deadPort = 0;

/** Starts one simulator named `name` with `--kv-transfer-config` and any other flags. */
async function sim(name: string, kvTransferConfig: string | undefined, extra: Record<string, unknown> = {}) {
  const overrides = kvTransferConfig ? { "kv-transfer-config": kvTransferConfig, ...extra } : extra;
  const [server] = await startSims(1, overrides);
  sims[name] = server!;
}

before(async () => {
  await sim("prefill", transfer("kv_producer", "NixlConnector", "engine-prefill"));
  await sim("decode", transfer("kv_consumer"));
  await sim("lmcache", transfer("kv_both", "LMCacheConnectorV1"));
  await sim("twin", transfer("kv_consumer", "NixlConnector", "engine-prefill"));
  await sim("other-model", transfer("kv_consumer"), { model: "other-model" });
  // Names a side-channel host decode cannot reach: the server listens on 127.0.0.1 only.
  await sim("wrong-side-channel", transfer("kv_producer"), { "kv-side-channel-host": "::1" });
  deadPort = await freePort();
});

after(async () => {
  await router?.close();
  await Promise.all(Object.values(sims).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** An endpoints file of `[name, sim or port, role label]` rows. */
function endpointsFile(rows: [string, string | number, string | undefined][]): string {
  const lines = rows.map(([name, server, role]) => {
    const port = typeof server === "number" ? server : sims[server]!.port;
    const labels = role === undefined ? "{}" : `{llm-d.ai/role: ${role}}`;
    return `- {name: ${name}, address: 127.0.0.1, port: ${port}, labels: ${labels}}`;
  });
  const path = join(dir, `endpoints-${rows.map((r) => r[0]).join("-")}.yaml`);
  writeFileSync(path, `endpoints:\n${lines.join("\n")}\n`);
  return path;
}

const doctor = (rows: [string, string | number, string | undefined][]) =>
  runDoctor(endpointsFromFile(endpointsFile(rows)), { timeoutMs: 5000, testRequest: true });

const failures = (findings: Finding[], check: string) =>
  findings.filter((f) => f.check === check && f.verdict === "fail").map((f) => f.message);

/** Runs `llmd doctor …args` as its own process. */
async function cli(args: string[]): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, [CLI, "doctor", ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, stdout };
}

const CORRECT: [string, string, string][] = [
  ["prefill-0", "prefill", "prefill"],
  ["decode-0", "decode", "decode"],
];

test("a correct P/D stack passes: every check ✔, both legs timed, the decode pulled the KV, exit 0", async () => {
  const { code, stdout } = await cli(["--endpoints-file", endpointsFile(CORRECT)]);
  assert.equal(code, 0, stdout);
  for (const check of ["roles", "stages", "reachability", "transfer-config", "models", "test-request"])
    assert.match(stdout, new RegExp(`^✔ ${check}: `, "m"), stdout);
  assert.doesNotMatch(stdout, /^[✘!]/m);
  assert.match(
    stdout,
    /prefill leg [\d.]+ ms on default\/prefill-0, decode leg [\d.]+ ms on default\/decode-0; the decode pulled the KV/,
  );
  assert.match(stdout, /0 problems, 0 warnings: ok$/m);
});

test("--router reads the router's /debug/endpoints; --json reports the legs", async () => {
  router = await startRouter({
    endpointsFile: endpointsFile(CORRECT),
    port: 0,
    scrapeIntervalMs: 20,
    log: () => {},
  });
  const listed = (await (await fetch(`${router.url}/debug/endpoints`)).json()) as {
    endpoints: { key: string; labels: Record<string, string>; port: number }[];
  };
  assert.deepEqual(
    listed.endpoints.map((e) => [e.key, e.labels["llm-d.ai/role"], e.port]),
    [
      ["default/prefill-0", "prefill", sims.prefill!.port],
      ["default/decode-0", "decode", sims.decode!.port],
    ],
  );
  const { code, stdout } = await cli(["--router", router.url, "--json"]);
  assert.equal(code, 0, stdout);
  const report = JSON.parse(stdout) as {
    ok: boolean;
    legs: Record<string, { endpoint: string; status: number; ms: number }>;
  };
  assert.equal(report.ok, true);
  assert.deepEqual(
    Object.entries(report.legs).map(([leg, t]) => [leg, t.endpoint, t.status]),
    [
      ["prefill", "default/prefill-0", 200],
      ["decode", "default/decode-0", 200],
    ],
  );
  assert.ok(report.legs.prefill!.ms > 0 && report.legs.decode!.ms > 0);
});

test("a wrong role label is named, and the stack has no prefill left; exit 1", async () => {
  const path = endpointsFile([
    ["prefill-0", "prefill", "prefil"],
    ["decode-0", "decode", "decode"],
  ]);
  const { code, stdout } = await cli(["--endpoints-file", path]);
  assert.equal(code, 1, stdout);
  assert.match(
    stdout,
    /^✘ roles: default\/prefill-0 has llm-d\.ai\/role="prefil", which no role filter accepts/m,
  );
  assert.match(stdout, /^ {4}fix: set llm-d\.ai\/role to one of prefill, /m);
  assert.match(stdout, /^✘ stages: no endpoint can prefill/m);
  assert.match(stdout, /FAILED$/m);
});

test("an unlabeled endpoint warns that prefill-filter never picks it", async () => {
  const report = await doctor([
    ["prefill-0", "prefill", "prefill"],
    ["decode-0", "decode", undefined],
  ]);
  const warning = report.findings.find((f) => f.check === "roles");
  assert.equal(warning?.verdict, "warn");
  assert.match(warning!.message, /default\/decode-0 has no llm-d\.ai\/role label/);
  assert.equal(report.ok, true, "a warning is not a failure");
});

test("mismatched connectors are found", async () => {
  const report = await doctor([
    ["prefill-0", "prefill", "prefill"],
    ["decode-lmcache", "lmcache", "decode"],
  ]);
  assert.equal(report.ok, false);
  assert.deepEqual(failures(report.findings, "transfer-config"), [
    "KV connectors disagree: NixlConnector (default/prefill-0), LMCacheConnectorV1 (default/decode-lmcache)",
  ]);
});

test("an unreachable prefill is found; the test request still runs on the reachable pair", async () => {
  const report = await doctor([
    ["prefill-dead", deadPort, "prefill"],
    ["prefill-0", "prefill", "prefill"],
    ["decode-0", "decode", "decode"],
  ]);
  assert.equal(report.ok, false);
  const [message, ...rest] = failures(report.findings, "reachability");
  assert.deepEqual(rest, []);
  assert.match(
    message!,
    new RegExp(
      `^prefill default/prefill-dead \\(127\\.0\\.0\\.1:${deadPort}\\) is unreachable from this host: ECONNREFUSED`,
    ),
  );
  assert.equal(report.findings.find((f) => f.check === "test-request")?.verdict, "pass");
});

test("one engine id on two servers is found", async () => {
  const report = await doctor([
    ["prefill-0", "prefill", "prefill"],
    ["decode-twin", "twin", "decode"],
  ]);
  assert.deepEqual(failures(report.findings, "transfer-config"), [
    "engine_id engine-prefill is shared by default/prefill-0, default/decode-twin: a decode cannot tell their KV apart",
  ]);
});

test("prefill and decode serving different models are found, and no test request is sent", async () => {
  const report = await doctor([
    ["prefill-0", "prefill", "prefill"],
    ["decode-other", "other-model", "decode"],
  ]);
  assert.deepEqual(failures(report.findings, "models"), [
    `prefill and decode serve no common model: default/prefill-0 [${MODEL}], default/decode-other [other-model]`,
  ]);
  assert.equal(report.findings.find((f) => f.check === "test-request")?.verdict, "skip");
});

test("a prefill whose kv_role cannot serve prefill legs is found, and its prefill leg is refused", async () => {
  const report = await doctor([
    ["prefill-consumer", "decode", "prefill"],
    ["decode-0", "twin", "decode"],
  ]);
  assert.deepEqual(failures(report.findings, "transfer-config"), [
    "prefill default/prefill-consumer has kv_role kv_consumer: it cannot serve prefill legs",
  ]);
  const [leg] = failures(report.findings, "test-request");
  assert.match(leg!, /^prefill leg to default\/prefill-consumer answered 400: /);
});

test("a prefill naming a KV side channel this host cannot reach is found before the decode leg", async () => {
  const report = await doctor([
    ["prefill-0", "wrong-side-channel", "prefill"],
    ["decode-0", "decode", "decode"],
  ]);
  const [message, ...rest] = failures(report.findings, "test-request");
  assert.deepEqual(rest, []);
  assert.match(
    message!,
    /^the KV side channel ::1:\d+ that default\/prefill-0 names is unreachable from this host: /,
  );
  assert.equal(report.legs.decode, undefined, "no decode leg is sent");
});
