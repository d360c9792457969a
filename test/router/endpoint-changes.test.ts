/**
 * Model servers leaving under load: an endpoint removed from the endpoints file, or one that
 * drains (not ready), gets no new requests while its in-flight stream finishes; one killed
 * mid-stream ends its client's stream with an explicit SSE error event while other requests are
 * served. A long shared prefix pins requests to one endpoint (the default config's affinity
 * filter), so the endpoint that leaves is the one the scheduler would pick.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, it } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { eventually, MODEL, routerFor, type SimProcess, spawnSim, startSims } from "./harness.ts";

const PREFIX = "a long shared system prompt that pins these requests to one endpoint. ".repeat(40);

let sims: SimServer[] = [];
let processes: SimProcess[] = [];
let router: Router | undefined;
let dir: string | undefined;

afterEach(async () => {
  await router?.close();
  router = undefined;
  await Promise.all(sims.map((s) => s.close()));
  for (const p of processes) p.child.kill("SIGKILL");
  sims = [];
  processes = [];
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Posts a completion of `PREFIX + suffix`; resolves with the status and the serving endpoint. */
async function complete(router: Router, suffix: string): Promise<{ status: number; endpoint: string }> {
  const res = await fetch(`${router.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, prompt: PREFIX + suffix, max_tokens: 2 }),
  });
  await res.arrayBuffer();
  return { status: res.status, endpoint: res.headers.get("x-llmd-endpoint") ?? "" };
}

/** A 200-token stream of `PREFIX + suffix` through the openai client, its first chunk received. */
async function stream(router: Router, suffix: string) {
  const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const { data, response } = await client.completions
    .create({
      model: MODEL,
      prompt: PREFIX + suffix,
      max_tokens: 200,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    } as OpenAI.CompletionCreateParamsStreaming)
    .withResponse();
  const chunks = data[Symbol.asyncIterator]();
  assert.equal((await chunks.next()).done, false);
  const rest = async (): Promise<number> => {
    let tokens = -1;
    for (let r = await chunks.next(); !r.done; r = await chunks.next()) {
      if (r.value.usage) tokens = r.value.usage.completion_tokens;
    }
    return tokens;
  };
  return { endpoint: response.headers.get("x-llmd-endpoint") ?? "", rest };
}

const portOf = (url: string) => Number(new URL(url).port);

function endpointsYaml(servers: readonly { url: string }[]): string {
  const lines = servers.map(
    (s, i) =>
      `- {name: sim-${portOf(s.url)}-${i}, namespace: default, address: 127.0.0.1, port: "${portOf(s.url)}"}`,
  );
  return `endpoints:\n${lines.join("\n")}\n`;
}

describe("endpoints leaving under load", () => {
  it("an endpoint removed from the endpoints file gets no new requests; its in-flight stream finishes", async () => {
    sims = await startSims(2, { "inter-token-latency": "4ms" });
    const [a, b] = sims as [SimServer, SimServer];
    dir = mkdtempSync(join(tmpdir(), "llmd-endpoints-"));
    const file = join(dir, "endpoints.yaml");
    writeFileSync(file, endpointsYaml([a]));
    router = await routerFor([], undefined, { endpoints: undefined, endpointsFile: file });
    const inFlight = await stream(router, " stream");
    assert.match(inFlight.endpoint, new RegExp(`${portOf(a.url)}`));

    writeFileSync(`${file}.tmp`, endpointsYaml([b]));
    renameSync(`${file}.tmp`, file);
    const onlyB = () => router?.pool.all().every((e) => e.metadata.port === portOf(b.url)) === true;
    assert.ok(await eventually(onlyB), "the pool drops the removed endpoint");
    assert.ok(await eventually(() => router?.pool.candidates().length === 1), "the new endpoint is ready");

    for (let i = 0; i < 4; i++) {
      const answer = await complete(router, ` new ${i}`);
      assert.equal(answer.status, 200);
      assert.match(
        answer.endpoint,
        new RegExp(`${portOf(b.url)}`),
        "new requests go to the remaining endpoint",
      );
    }
    assert.equal(await inFlight.rest(), 200, "the stream on the removed endpoint runs to its end");
    assert.equal(router.gateway.inflight.total(), 0);
  });

  it("an endpoint that drains (not ready) gets no new requests; its in-flight stream finishes", async () => {
    sims = await startSims(2, { "inter-token-latency": "4ms" });
    router = await routerFor(sims.map((s) => s.url));
    const seed = await complete(router, " seed");
    const pinned = sims.find((s) => seed.endpoint.endsWith(`:${portOf(s.url)}`)) as SimServer;
    const other = sims.find((s) => s !== pinned) as SimServer;
    const inFlight = await stream(router, " stream");
    assert.equal(inFlight.endpoint, seed.endpoint, "the shared prefix pins the stream");

    const drained = pinned.drain(30_000);
    assert.equal((await fetch(`${pinned.url}/ready`)).status, 503);
    for (let i = 0; i < 4; i++) {
      const answer = await complete(router, ` new ${i}`);
      assert.equal(answer.status, 200, "the client sees no refusal");
      assert.ok(answer.endpoint.endsWith(`:${portOf(other.url)}`), `new request ${i} went elsewhere`);
    }
    assert.equal(router.pool.get(seed.endpoint)?.status.health, "draining");
    assert.equal(await inFlight.rest(), 200, "the stream on the draining endpoint runs to its end");
    assert.equal(await drained, 0, "nothing was cut off");
  });

  it("a model server killed mid-stream ends the stream with an SSE error event; other requests are served", async () => {
    const args = ["--mode", "echo", "--time-to-first-token", "5ms", "--inter-token-latency", "4ms"];
    processes = await Promise.all([spawnSim(args), spawnSim(args)]);
    router = await routerFor(processes.map((p) => p.url));
    const seed = await complete(router, " seed");
    const victim = processes.find((p) => seed.endpoint.endsWith(`:${portOf(p.url)}`)) as SimProcess;

    const res = await fetch(`${router.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: MODEL,
        prompt: `${PREFIX} stream`,
        max_tokens: 2000,
        stream: true,
        ignore_eos: true,
      }),
    });
    assert.equal(res.headers.get("x-llmd-endpoint"), seed.endpoint);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    victim.child.kill("SIGKILL");
    await once(victim.child, "exit");
    for (let r = await reader.read(); !r.done; r = await reader.read())
      text += new TextDecoder().decode(r.value);

    const events = text.split("\n\n").filter(Boolean);
    const last = JSON.parse((events.at(-1) ?? "").replace(/^data: /, "")) as {
      error?: { code: string; type: string };
    };
    assert.deepEqual(last.error && [last.error.code, last.error.type], ["upstream_failed", "server_error"]);
    assert.ok(!text.includes("[DONE]"), "no [DONE] after a failed stream");
    assert.ok(events.length > 1, "tokens came before the error event");

    for (let i = 0; i < 4; i++) {
      const answer = await complete(router, ` after ${i}`);
      assert.equal(answer.status, 200);
      assert.notEqual(answer.endpoint, seed.endpoint);
    }
    assert.equal(router.gateway.inflight.total(), 0);
  });
});
