import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { renderChat } from "../../src/api/prompt.ts";
import { streamCompletion } from "../../src/load/stream-request.ts";
import { stageCuts } from "../../src/scheduler/plugins/staged-prefill/index.ts";
import type { SimServer } from "../../src/sim/server.ts";
import {
  exampleConfig,
  LLAMA_TOKENIZER_SIM,
  MODEL,
  metricSum,
  routerFor,
  type SimProcess,
  spawnSim,
  startSims,
  stopChild,
} from "./harness.ts";
import { type Nginx, startNginx } from "./nginx.ts";

const STAGES = "llmd_staged_prefill_stages_total";

/** The default config, whose `staged-prefill` stages cold prompts of 49,152 tokens or more 32,768 at a time. */
const config = readFileSync(exampleConfig("default").path, "utf8");

interface Served {
  endpoint: string;
  cached: number;
  /** `x-llmd-staged-tokens`: what the stages prefilled. */
  staged: string | null;
}

async function complete(client: OpenAI, prompt: number[] | string): Promise<Served> {
  const { data, response } = await client.completions
    .create({ model: MODEL, prompt, max_tokens: 2 })
    .withResponse();
  const usage = data.usage as { prompt_tokens_details?: { cached_tokens?: number } } | undefined;
  return {
    endpoint: response.headers.get("x-llmd-endpoint") ?? "",
    cached: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    staged: response.headers.get("x-llmd-staged-tokens"),
  };
}

const successes = async (sim: SimServer) =>
  metricSum(await (await fetch(`${sim.url}/metrics`)).text(), "vllm:request_success_total");

/** A router under test: its URL, an `openai` client of it, and its Prometheus page. */
interface Routed {
  url: string;
  client: OpenAI;
  metrics(): Promise<string>;
}

/** Runs `test` against a router over `urls` with `routerConfig` (default: the default config), then closes it. */
async function withRouter(
  urls: readonly string[],
  test: (routed: Routed) => Promise<void>,
  routerConfig = config,
) {
  const router = await routerFor(urls, routerConfig);
  try {
    await test({
      url: router.url,
      client: new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 }),
      metrics: async () => (await fetch(`${router.url}/metrics`)).text(),
    });
  } finally {
    await router.close();
  }
}

/** About 82,000 tokens of notes by the 4-characters-a-token count, each note its own sentence. */
const NOTES = Array.from(
  { length: 6000 },
  (_, i) => `Note ${i}: the quick brown fox jumps over the lazy dog.`,
).join(" ");

describe("staged prefill over HTTP", () => {
  let sims: SimServer[];
  before(async () => {
    sims = await startSims(2);
  });
  after(async () => {
    await Promise.all(sims.map((s) => s.close()));
  });

  it("prefills a long cold token-id prompt in stages on its endpoint before forwarding it", async () => {
    assert.match(config, /- type: staged-prefill/);
    await withRouter(
      sims.map((s) => s.url),
      async ({ client, metrics }) => {
        const before = await Promise.all(sims.map(successes));
        // 50,000 ids nobody holds: one stage ends at 32,768 tokens, the request prefills the rest.
        const prompt = Array.from({ length: 50_000 }, (_, i) => 1000 + ((i * 7919) % 30000));
        const served = await complete(client, prompt);
        assert.equal(served.cached, 32_768, "the request found the stage cached on its endpoint");
        assert.equal(served.staged, "32768", "the response names what the stage prefilled");
        const page = await metrics();
        assert.equal(metricSum(page, STAGES), 1);
        assert.match(page, /llmd_staged_prefill_stages_total\{outcome="answered"\} 1/);
        const after = await Promise.all(sims.map(successes));
        const ran = after.map((n, i) => n - before[i]!);
        const target = sims.findIndex((s) => served.endpoint.endsWith(`:${new URL(s.url).port}`));
        assert.ok(target >= 0, `served by ${served.endpoint}`);
        assert.deepEqual(ran.toSorted(), [0, 2], `the stage and the request on one endpoint: ${ran}`);
        assert.equal(ran[target], 2, "on the endpoint that served it");
      },
    );
  });

  it("llmd bench counts the cached tokens the stages prefilled as not cached", async () => {
    await withRouter(
      sims.map((s) => s.url),
      async ({ url, metrics }) => {
        const prompt = Array.from({ length: 50_000 }, (_, i) => 3000 + ((i * 104_729) % 40_000));
        const body = JSON.stringify({
          model: MODEL,
          prompt,
          max_tokens: 2,
          stream: true,
          stream_options: { include_usage: true },
        });
        const first = await streamCompletion(url, body, {});
        assert.equal(first.outcome, "served");
        assert.equal(first.promptTokens, 50_000);
        assert.equal(first.cachedTokens, 0, "a fresh prompt: the stage's 32,768 tokens are its own work");
        assert.equal(metricSum(await metrics(), STAGES), 1, "the prompt was staged");
        const again = await streamCompletion(url, body, {});
        assert.ok(
          again.cachedTokens >= 49_984,
          `the whole prompt cached the second time: ${again.cachedTokens}`,
        );
      },
    );
  });

  it("stages a long chat after a message, rendered without the generation prompt, through the default config", async () => {
    await withRouter(
      sims.map((s) => s.url),
      async ({ client, metrics }) => {
        // Eight messages of 35,000 characters: about 70,000 tokens by the count both sides use here.
        const messages = Array.from({ length: 8 }, (_, i) => ({
          role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
          content: `Message ${i}: ${NOTES.slice(i * 35_000, (i + 1) * 35_000)}`,
        }));
        const { data, response } = await client.chat.completions
          .create({ model: MODEL, max_tokens: 2, messages })
          .withResponse();
        // The one cut, at 32,768 tokens, moves down to the end of the third message.
        const stageText = renderChat(messages.slice(0, 3), false);
        const cached = (data.usage as { prompt_tokens_details?: { cached_tokens?: number } })
          .prompt_tokens_details?.cached_tokens;
        assert.equal(cached, Math.floor(Math.floor(stageText.length / 4) / 16) * 16);
        const staged = Number(response.headers.get("x-llmd-staged-tokens"));
        assert.ok(
          Math.abs(staged - stageText.length / 4) < 64,
          `staged ${staged} of ${stageText.length / 4}`,
        );
        assert.match(await metrics(), /llmd_staged_prefill_stages_total\{outcome="answered"\} 1/);
      },
    );
  });

  it("stages a long completions prompt of text at a space, and not a chat of one message nor a short prompt", async () => {
    await withRouter(
      sims.map((s) => s.url),
      async ({ client, metrics }) => {
        // 252,000 characters: 63,000 tokens by the 4-characters-a-token count both sides use here.
        const text = Array.from(
          { length: 28_000 },
          (_, i) => `w${String(i % 100_000).padStart(7, "0")}`,
        ).join(" ");
        const served = await complete(client, text);
        const stageChars = text.lastIndexOf(
          " ",
          Math.floor((32_768 / Math.ceil(text.length / 4)) * text.length),
        );
        const stageBlocks = Math.floor(Math.floor(stageChars / 4) / 16) * 16;
        assert.equal(served.cached, stageBlocks, "the request found the stage's text cached");
        await client.chat.completions.create({
          model: MODEL,
          max_tokens: 2,
          messages: [{ role: "user", content: text }],
        });
        await complete(
          client,
          Array.from({ length: 40_000 }, (_, i) => 2000 + (i % 5000)),
        );
        assert.equal(metricSum(await metrics(), STAGES), 1, "only the text completion was staged");
      },
    );
  });
});

describe("staged prefill when the endpoint refuses the stages", () => {
  let sims: SimServer[];
  let nginx: Nginx;
  before(async () => {
    sims = await startSims(1);
    const upstream = new URL(sims[0]!.url).host;
    // In front of the simulator, refusing every stage (their request ids end in -stage-<n>).
    nginx = await startNginx(
      (port) => `  client_max_body_size 16m;
  client_body_buffer_size 16m;
  server {
    listen 127.0.0.1:${port};
    location / {
      if ($http_x_request_id ~ "-stage-") { return 503; }
      proxy_pass http://${upstream};
      proxy_http_version 1.1;
      proxy_buffering off;
    }
  }`,
    );
  });
  after(async () => {
    await nginx.stop();
    await Promise.all(sims.map((s) => s.close()));
  });

  it("forwards the request as it is and counts the stage unanswered", async () => {
    await withRouter([`http://127.0.0.1:${nginx.port}`], async ({ client, metrics }) => {
      const prompt = Array.from({ length: 50_000 }, (_, i) => 5000 + ((i * 7919) % 20000));
      const served = await complete(client, prompt);
      assert.equal(served.cached, 0, "nothing was staged on the endpoint");
      assert.equal(served.staged, null, "no staged tokens to name");
      const page = await metrics();
      assert.match(page, /llmd_staged_prefill_stages_total\{outcome="unanswered"\} 1/);
      assert.equal(metricSum(page, STAGES), 1);
    });
  });
});

describe("staged prefill of a chat, with the model's tokenizer in the router and the simulator", () => {
  let sim: SimProcess;
  before(async () => {
    sim = await spawnSim(LLAMA_TOKENIZER_SIM);
  });
  after(async () => {
    await stopChild(sim.child);
  });

  it("the stage's ids are the ones the model server renders and tokenizes from the chat", async () => {
    const withTokenizer = config.replace(
      "plugins:\n",
      "plugins:\n- type: token-producer\n  parameters: {tokenizer: llama3.1}\n",
    );
    await withRouter(
      [sim.url],
      async ({ client, metrics }) => {
        const answer = await client.chat.completions.create({
          model: MODEL,
          max_tokens: 2,
          messages: [
            { role: "system", content: "You summarise notes." },
            { role: "user", content: NOTES },
          ],
        });
        const usage = answer.usage as {
          prompt_tokens: number;
          prompt_tokens_details?: { cached_tokens?: number };
        };
        const cuts = stageCuts(usage.prompt_tokens, 0, 32_768);
        assert.ok(cuts.length >= 1, `${usage.prompt_tokens} prompt tokens`);
        assert.equal(
          usage.prompt_tokens_details?.cached_tokens,
          cuts.at(-1),
          "the stages' ids were the chat's own",
        );
        assert.equal(metricSum(await metrics(), STAGES), cuts.length);
      },
      withTokenizer,
    );
  });

  it("a completions prompt of text is staged as its text, which the model's tokenizer cuts the same way", async () => {
    await withRouter([sim.url], async ({ client, metrics }) => {
      const { usage } = await client.completions.create({ model: MODEL, prompt: NOTES, max_tokens: 2 });
      const cached =
        (usage as { prompt_tokens_details?: { cached_tokens?: number } }).prompt_tokens_details
          ?.cached_tokens ?? 0;
      // Cut by the router's estimate (4 characters a token), each stage at the space below its share.
      const estimate = Math.ceil(NOTES.length / 4);
      const cuts = stageCuts(estimate, 0, 32_768);
      const expected = (cuts.at(-1)! / estimate) * usage!.prompt_tokens;
      assert.ok(
        cached > 0.95 * expected && cached <= expected,
        `${cached} of ${usage!.prompt_tokens} cached`,
      );
      assert.equal(metricSum(await metrics(), STAGES), cuts.length);
    });
  });
});
