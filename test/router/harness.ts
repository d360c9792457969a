/**
 * Integration-test wiring: in-process simulators on loopback (port 0) behind a real router
 * (config loader, endpoint pool, gateway), plus a Prometheus text reader.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { parseEndpointList } from "../../src/endpoints/sources/static-source.ts";
import { type Router, type RouterOptions, startRouter } from "../../src/gateway/router.ts";
import { parseSimConfig } from "../../src/sim/config.ts";
import { type SimServer, startSimServer } from "../../src/sim/server.ts";

/** Model name every test simulator serves. */
export const MODEL = "test-model";

/** An example config shipped in examples/configs/ (each is loaded by some test). */
export function exampleConfig(name: string): { path: string } {
  return { path: fileURLToPath(new URL(`../../examples/configs/${name}.yaml`, import.meta.url)) };
}

/**
 * A config routing on the approximate prefix index alone: `producers` (YAML plugin entries, one
 * per line, the approx producer among them), then `prefix-cache-scorer` and `max-score-picker` in
 * one profile.
 */
export function prefixCacheConfig(producers: string): string {
  return `apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
${producers}
- type: prefix-cache-scorer
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: prefix-cache-scorer
  - pluginRef: max-score-picker
`;
}

/** Starts `n` simulators with fast fixed latencies (overrides use `llmd sim` flag names). */
export async function startSims(n: number, overrides: Record<string, unknown> = {}): Promise<SimServer[]> {
  const parsed = parseSimConfig({
    model: MODEL,
    port: 0,
    host: "127.0.0.1",
    mode: "echo",
    "time-to-first-token": "5ms",
    "inter-token-latency": "1ms",
    ...overrides,
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return Promise.all(Array.from({ length: n }, () => startSimServer(parsed.config)));
}

/**
 * A router over `urls` with `config` (default: examples/configs/default.yaml), scraping every
 * 20 ms, on a free loopback port, silent; `extra` adds or overrides router options.
 */
export function routerFor(
  urls: readonly string[],
  config: string | { path: string } = exampleConfig("default"),
  extra: Partial<RouterOptions> = {},
): Promise<Router> {
  return startRouter({
    config,
    endpoints: parseEndpointList(urls.join(",")),
    port: 0,
    scrapeIntervalMs: 20,
    log: () => {},
    ...extra,
  });
}

/** Sum of every sample of `name` (any labels) in a Prometheus text page. */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== " " && rest[0] !== "{") continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** Polls `check` every 20 ms until it returns true or `timeoutMs` passes. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** The rest of a stream: the completion tokens its usage chunk reports (-1 if none), or the error that ended it. */
export async function restOfStream(
  iterator: AsyncIterator<{ usage?: { completion_tokens: number } | null }>,
): Promise<number | Error> {
  try {
    let tokens = -1;
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) {
      if (r.value.usage) tokens = r.value.usage.completion_tokens;
    }
    return tokens;
  } catch (err) {
    return err as Error;
  }
}

/** A simulator running as its own `llmd sim` process (so a test can SIGKILL it). */
export interface SimProcess {
  url: string;
  child: ChildProcess;
}

const CLI_MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

/** `llmd sim` flags for a fast simulator that counts with Llama-3.1's real tokenizer. */
export const LLAMA_TOKENIZER_SIM = [
  "--tokenizer",
  "llama3.1",
  "--time-to-first-token",
  "2ms",
  "--inter-token-latency",
  "1ms",
];

/** Spawns `llmd sim --port 0 …` and resolves with the URL it prints once listening. */
export async function spawnSim(extraArgs: readonly string[] = []): Promise<SimProcess> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      CLI_MAIN,
      "sim",
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      "--model",
      MODEL,
      ...extraArgs,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let seen = "";
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    seen += chunk.toString();
    const url = /listening on (http:\/\/\S+)/.exec(seen)?.[1];
    if (url) return { url, child };
  }
  throw new Error(`llmd sim exited before listening: ${seen}`);
}

/** A `llmd router` running as its own process (`bin/llmd.js`, as installed). */
export interface RouterProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr: () => string;
}

const CLI_BIN = fileURLToPath(new URL("../../bin/llmd.js", import.meta.url));

/**
 * Spawns `llmd router --host 127.0.0.1 --port <port> …args` (port 0 = any free port) and resolves
 * with the URL it prints once listening.
 */
export async function spawnRouter(args: readonly string[], port = 0): Promise<RouterProcess> {
  const child = spawn(
    process.execPath,
    [CLI_BIN, "router", "--host", "127.0.0.1", "--port", String(port), ...args],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let seen = "";
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    seen += chunk.toString();
    const url = /listening on (http:\/\/\S+)/.exec(seen)?.[1];
    if (url) return { url, port: Number(new URL(url).port), child, stderr: () => stderr };
  }
  throw new Error(`llmd router exited before listening: ${seen}${stderr}`);
}

/** Spawns `llmd up --port 0 --sim-base-port 0 …args` and resolves with the router URL it prints. */
export async function spawnUp(args: readonly string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI_BIN, "up", "--port", "0", "--sim-base-port", "0", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let seen = "";
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    seen += chunk.toString();
    const url = /router listening on (http:\/\/\S+)/.exec(seen)?.[1];
    if (url) return { child, url };
  }
  throw new Error(`llmd up exited before listening: ${seen}`);
}

/** SIGTERMs `child` and waits for it to exit. */
export async function stopChild(child: ChildProcess): Promise<void> {
  const exited = exitOf(child);
  child.kill("SIGTERM");
  await exited;
}

/** Resolves with the exit code (or signal name) of `child`, at once when it already exited. */
export async function exitOf(child: ChildProcess): Promise<number | string> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? String(child.signalCode);
  const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
  return code ?? String(signal);
}
