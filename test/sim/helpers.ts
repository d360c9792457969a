/** Shared helpers of the simulator integration tests: boot a server, read its /metrics. */
import assert from "node:assert/strict";
import { parseSimConfig } from "../../src/sim/config.ts";
import { type SimServer, startSimServer } from "../../src/sim/server.ts";

/** Model name every test server serves. */
export const MODEL = "sim-model";

/** Starts a simulator on loopback port 0 with fast simple timing unless overridden. */
export async function startTestSim(overrides: Record<string, unknown> = {}): Promise<SimServer> {
  const base = {
    model: MODEL,
    port: 0,
    host: "127.0.0.1",
    seed: 7,
    "time-to-first-token": "2ms",
    "inter-token-latency": "1ms",
  };
  const parsed = parseSimConfig(base, overrides);
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.error);
  return startSimServer(parsed.config);
}

/** Parsed Prometheus samples: `name{labels}` → value, plus `name` → sum over label sets. */
export type Samples = Map<string, number>;

/** Scrapes `/metrics` of `url`. */
export async function scrape(url: string): Promise<Samples> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  const samples: Samples = new Map();
  for (const line of (await res.text()).split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    const series = line.slice(0, space);
    const value = Number(line.slice(space + 1));
    samples.set(series, value);
    const name = series.split("{")[0]!;
    if (name !== series) samples.set(name, (samples.get(name) ?? 0) + value);
  }
  return samples;
}

/** The value of metric `name` summed over its label sets; fails if absent. */
export function metric(samples: Samples, name: string): number {
  const value = samples.get(name);
  assert.ok(value !== undefined, `metric ${name} missing`);
  return value;
}

/** Polls /metrics until `predicate` holds (or fails after `timeoutMs`); returns the last samples. */
export async function waitForMetrics(
  url: string,
  predicate: (s: Samples) => boolean,
  timeoutMs = 2000,
): Promise<Samples> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const samples = await scrape(url);
    if (predicate(samples)) return samples;
    if (Date.now() > deadline) return samples;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** POSTs `body` (with the test model) to `url`'s `/v1/completions`; fails unless 200; the parsed answer. */
export async function completion<T = unknown>(url: string, body: Record<string, unknown>): Promise<T> {
  const res = await fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, ...body }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as T;
}

/** `completion`, then `id` appended to `done`: the order in which concurrent requests finished. */
export async function completeInto(
  done: string[],
  id: string,
  url: string,
  body: Record<string, unknown>,
): Promise<void> {
  await completion(url, body);
  done.push(id);
}

/** Prompt text of exactly `tokens` built-in tokens, distinct per `tag` from its first token on. */
export function promptOfTokens(tokens: number, tag: string): string {
  const unit = `${tag}:abc-`.padEnd(4, "_").slice(0, 4);
  let text = "";
  for (let i = 0; i < tokens; i++) text += i % 7 === 0 ? unit : (i % 10_000).toString(36).padStart(4, "0");
  return text;
}
