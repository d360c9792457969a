/**
 * Rolling restarts lose nothing: nginx in front of two `llmd router` processes over two simulator
 * processes, both routers restarted one at a time (SIGTERM, wait for the exit, start again on the
 * same port) under a steady mix of streaming and non-streaming requests. nginx retries the other
 * router on a connection error or a 503 (`proxy_next_upstream error timeout http_503
 * non_idempotent`: the requests are POSTs), which is what a draining router answers new requests
 * with, so every request must succeed and every stream run to its end.
 *
 * Needs nginx (test/router/nginx.ts starts and stops its own).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { exitOf, MODEL, type RouterProcess, type SimProcess, spawnRouter, spawnSim } from "./harness.ts";
import { freePort } from "../../src/core/free-port.ts";
import { type Nginx, startNginx } from "./nginx.ts";

/** The `http` block: nginx on `port`, retrying the other router on an error or a 503. */
function routersBehind(routerPorts: readonly number[]) {
  const upstreams = routerPorts.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join("\n");
  return (port: number) => `  upstream routers {
${upstreams}
    keepalive 8;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://routers;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_next_upstream error timeout http_503 non_idempotent;
      proxy_connect_timeout 2s;
      proxy_read_timeout 60s;
    }
  }`;
}

/** A result of one client request. */
type Outcome = { ok: true } | { ok: false; what: string };

/** Tokens of a load request (10 ms apart: 0.4 s) and of the stream that keeps a router draining (1.5 s). */
const TOKENS = 40;
const LONG_TOKENS = 150;

/** One request through `client`: a stream or not; ok only when all `tokens` arrived. */
async function request(client: OpenAI, stream: boolean, n: number, tokens = TOKENS): Promise<Outcome> {
  const body = { model: MODEL, prompt: `rolling ${n}`, max_tokens: tokens, ignore_eos: true };
  try {
    if (!stream) {
      const done = await client.completions.create(body);
      const got = done.usage?.completion_tokens;
      return got === tokens ? { ok: true } : { ok: false, what: `plain ${n}: ${got} tokens` };
    }
    const chunks = await client.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    } as OpenAI.CompletionCreateParamsStreaming);
    let got = -1;
    for await (const chunk of chunks) if (chunk.usage) got = chunk.usage.completion_tokens;
    return got === tokens ? { ok: true } : { ok: false, what: `stream ${n}: ${got} tokens` };
  } catch (err) {
    return { ok: false, what: `${stream ? "stream" : "plain"} ${n}: ${String(err)}` };
  }
}

describe("rolling restart of two routers behind nginx", () => {
  let nginx: Nginx | undefined;
  let nginxPort: number;
  let sims: SimProcess[] = [];
  const routers: RouterProcess[] = [];
  let routerArgs: string[];

  before(async () => {
    const simArgs = ["--mode", "echo", "--time-to-first-token", "5ms", "--inter-token-latency", "10ms"];
    sims = await Promise.all([spawnSim(simArgs), spawnSim(simArgs)]);
    routerArgs = ["--endpoints", sims.map((s) => s.url).join(","), "--drain-timeout", "20s"];
    const ports = [await freePort(), await freePort()];
    for (const port of ports) routers.push(await spawnRouter(routerArgs, port));
    nginx = await startNginx(routersBehind(ports));
    nginxPort = nginx.port;
  });

  after(async () => {
    await nginx?.stop();
    for (const r of routers) if (r.child.exitCode === null) r.child.kill("SIGKILL");
    for (const s of sims) s.child.kill("SIGKILL");
  });

  it("serves every request while each router is drained and restarted in turn", async () => {
    const client = new OpenAI({
      baseURL: `http://127.0.0.1:${nginxPort}/v1`,
      apiKey: "unused",
      maxRetries: 0,
    });
    const outcomes: Outcome[] = [];
    let running = true;
    // Two client loops, each alternating streaming and non-streaming requests.
    const loop = async (id: number) => {
      for (let n = 0; running; n++)
        outcomes.push(await request(client, (n + id) % 2 === 0, id * 100_000 + n));
    };
    const loops = [loop(0), loop(1)];
    const settle = () => new Promise((resolve) => setTimeout(resolve, 500));
    await settle();
    const exits: (number | string)[] = [];
    for (let i = 0; i < routers.length; i++) {
      const old = routers[i] as RouterProcess;
      // A long stream straight to this router keeps it draining for a while, so the load's next
      // requests reach it while it refuses them with 503 and nginx must retry them on the other.
      const direct = new OpenAI({ baseURL: `${old.url}/v1`, apiKey: "unused", maxRetries: 0 });
      const long = request(direct, true, -i, LONG_TOKENS);
      await new Promise((resolve) => setTimeout(resolve, 100));
      old.child.kill("SIGTERM");
      exits.push(await exitOf(old.child));
      outcomes.push(await long);
      routers[i] = await spawnRouter(routerArgs, old.port);
      const ready = await fetch(`${routers[i]?.url}/ready`);
      assert.equal(ready.status, 200, "the restarted router is ready");
      await settle();
    }
    running = false;
    await Promise.all(loops);

    assert.deepEqual(exits, [0, 0], "each router drained and exited 0");
    const failed = outcomes.filter((o): o is Extract<Outcome, { ok: false }> => !o.ok).map((o) => o.what);
    assert.deepEqual(failed, [], `failed requests out of ${outcomes.length}`);
    assert.ok(outcomes.length >= 20, `a steady load ran through the restarts (${outcomes.length} requests)`);
  });
});
