/**
 * The shared hostile-input generator (test/fuzz/cases.ts; `npm run bench -- fuzz` runs 100,000)
 * at a router over two simulators, CI-sized: no 5xx, no uncaught exception, no hang, nothing left
 * in flight in the router or running or holding KV blocks in the simulators, and a normal
 * completion and stream served afterwards. Plus the regressions it found.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import {
  FUZZ_MODEL,
  normalRequestChecks,
  ROUTER_TARGET,
  routerLeakChecks,
  runFuzz,
  sendCase,
  simLeakChecks,
  startFuzzRouter,
  startFuzzSim,
} from "../fuzz/run.ts";

const CASES = 2000;

describe("hostile input at the router", () => {
  let sims: SimServer[];
  let router: Router;
  let uncaught: unknown[];
  const onUncaught = (err: unknown) => uncaught.push(err);
  before(async () => {
    uncaught = [];
    process.on("uncaughtException", onUncaught);
    process.on("unhandledRejection", onUncaught);
    sims = await Promise.all([startFuzzSim(), startFuzzSim()]);
    router = await startFuzzRouter(sims);
    for (let i = 0; i < 100 && (await fetch(`${router.url}/ready`)).status !== 200; i++)
      await new Promise((r) => setTimeout(r, 50));
  });
  after(async () => {
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onUncaught);
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  it(`${CASES} seeded hostile requests: no 5xx, no crash, no hang, no leak`, {
    timeout: 60_000,
  }, async () => {
    const report = await runFuzz({
      port: router.port,
      target: ROUTER_TARGET,
      seed: 17,
      count: CASES,
      concurrency: 32,
    });
    assert.equal(report.cases, CASES);
    assert.deepEqual(report.serverErrors.slice(0, 3), [], "no 5xx for a client's mistake");
    assert.deepEqual(report.hangs.slice(0, 3), [], "every whole request answered");
    assert.deepEqual(uncaught, []);
    assert.ok((report.byStatus.get("200") ?? 0) > 50, "some cases are valid and served");
    assert.ok((report.byStatus.get("400") ?? 0) > 500, "most are refused");
    const checks = [
      ...(await routerLeakChecks(router)),
      ...(await simLeakChecks(sims[0]!, "sim 1")),
      ...(await simLeakChecks(sims[1]!, "sim 2")),
      ...(await normalRequestChecks(router.url, "router")),
    ];
    assert.deepEqual(
      checks.filter((c) => !c.ok),
      [],
    );
  });

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${router.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });

  it("answers a body nested 100,000 levels deep 400 invalid_json (it crashed the router)", async () => {
    for (const nested of [
      "[".repeat(100_000) + "]".repeat(100_000),
      '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000),
    ]) {
      for (const field of ["prompt", "temperature", "x"]) {
        const r = await post(`{"model":"${FUZZ_MODEL}","prompt":"x","${field}":${nested}}`);
        assert.equal(r.status, 400, field);
        assert.equal(((await r.json()) as { error: { code: string } }).error.code, "invalid_json");
      }
    }
    assert.deepEqual(uncaught, []);
  });

  it("serves a request with Expect: 100-continue (it was a 502 upstream_failed)", async () => {
    const body = JSON.stringify({ model: FUZZ_MODEL, prompt: "x", max_tokens: 2 });
    const result = await sendCase(router.port, {
      kind: "expect",
      chunks: [
        Buffer.from(
          `POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nexpect: 100-continue\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        ),
      ],
      end: "read",
      answerExpected: true,
    });
    assert.deepEqual(result.statuses, [100, 200], result.head);
  });
});
