/**
 * `llmd sim`: the vLLM-compatible simulator server. Flags carry llm-d-inference-sim's names; `--config`
 * reads the same keys from YAML and flags given on the command line override it. Prints
 * `llmd sim listening on <url>` on stdout once bound. SIGTERM/SIGINT drain it (`--drain-timeout`); a
 * second signal exits at once. When spawned with an IPC channel it exits as soon as the channel
 * closes (the parent died), so no simulator outlives `llmd up`.
 */
import type { Command } from "commander";
import { LlmdError } from "../../api/errors.ts";
import { FAILURE_TYPES, parseSimConfig, readSimConfigFile } from "../../sim/config.ts";
import { kvTransferEnvLayer } from "../../sim/kv-transfer-config.ts";
import { startSimServer } from "../../sim/server.ts";
import { EDGE_FLAGS } from "../edge-flags.ts";
import { startupFailureLine } from "../flags.ts";
import { drainOnSignals } from "../shutdown.ts";

const FLAGS: [flags: string, description: string][] = [
  ["--config <file>", "YAML file with the same keys as these flags (flags win)"],
  ["--port <n>", "port to listen on; 0 picks a free one (default 8000)"],
  ["--host <addr>", "address to bind (default 0.0.0.0)"],
  ["--model <name>", "model name (required)"],
  ["--served-model-name <names...>", "names clients may use for the model (default: --model)"],
  ["--lora-modules <json...>", 'LoRA adapters, each \'{"name":"…","path":"…"}\''],
  ["--max-loras <n>", "LoRA slots reported in vllm:lora_requests_info (default 1)"],
  ["--max-num-seqs <n>", "most sequences in the running batch (default 256)"],
  [
    "--scheduling-policy <policy>",
    "fcfs (default) or priority: waiting requests by body `priority`, lower first",
  ],
  ["--max-num-batched-tokens <n>", "token budget of one step (default 8192)"],
  [
    "--long-prefill-token-threshold <n>",
    "most tokens one request takes of a step, so short prompts start beside a long one (default 0 = no cap)",
  ],
  ["--max-model-len <n>", "longest prompt + output in tokens (default: the profile model's window)"],
  ["--max-waiting-queue-length <n>", "waiting requests before 429 (default 1000)"],
  ["--block-size <n>", "tokens per KV block: 8|16|32|64|128 (default 16)"],
  ["--kv-cache-size <n>", "GPU KV blocks (default: derived from the profile's GPU memory)"],
  ["--cpu-offload-gb <gb>", "CPU KV offload tier in GB (default 0 = off)"],
  [
    "--profile <name>",
    "measured timing profile: h200-llama3-8b (default), h200-qwen3-32b-tp2, h200-llama3-70b-tp4",
  ],
  [
    "--tokenizer <name>",
    "what usage counts with: char4 | llama3.1 (default: the --profile's model's, else char4)",
  ],
  ["--mode <mode>", "output text: echo | random (default random)"],
  ["--seed <n>", "seed of random outputs and failure injection (default: time)"],
  ["--latency-calculator <kind>", "simple latency model: constant | per-token"],
  ["--time-to-first-token <dur>", "TTFT, e.g. 200ms (selects the simple latency model)"],
  ["--time-to-first-token-std-dev <dur>", "TTFT jitter"],
  ["--inter-token-latency <dur>", "time between output tokens, e.g. 20ms"],
  ["--inter-token-latency-std-dev <dur>", "inter-token jitter"],
  ["--prefill-overhead <dur>", "fixed prefill cost (per-token model)"],
  ["--prefill-time-per-token <dur>", "prefill cost per uncached prompt token (per-token model)"],
  ["--prefill-time-std-dev <dur>", "prefill jitter"],
  ["--time-factor-under-load <x>", "latency multiplier when max-num-seqs requests run (>= 1)"],
  ["--speed <x>", "engine time runs x times faster than wall time (default 1)"],
  ["--failure-injection-rate <pct>", "percent of requests that fail (0-100, default 0)"],
  ["--failure-types <types...>", `failure kinds to inject: ${FAILURE_TYPES.join(", ")}`],
  ["--max-body-bytes <n>", "largest request body; bigger gets 413 (default 16777216)"],
  [
    "--drain-timeout <dur>",
    "on SIGTERM/SIGINT, how long running requests may finish before exit (Go duration or seconds; default 30s)",
  ],
  [
    "--stream-interval <n>",
    "stream every n tokens (the first token and the last chunk at once), as vLLM's (default 1)",
  ],
  [
    "--kv-events-config <json>",
    'vLLM\'s KV events config, e.g. \'{"enable_kv_cache_events":true,"publisher":"zmq","endpoint":"tcp://*:5557","replay_endpoint":"tcp://*:5558"}\'',
  ],
  ["--kv-events-encoding <enc>", "KV event encoding: array (vLLM's positional, default) | map"],
  [
    "--kv-transfer-config <json>",
    'P/D KV transfer as vLLM\'s, e.g. \'{"kv_connector":"NixlConnector","kv_role":"kv_both"}\' (also engine_id, kv_load_failure_policy recompute|fail)',
  ],
  [
    "--kv-side-channel-host <addr>",
    "host named in kv_transfer_params (env VLLM_NIXL_SIDE_CHANNEL_HOST; default: the server's)",
  ],
  [
    "--kv-side-channel-port <n>",
    "port of the KV side channel (env VLLM_NIXL_SIDE_CHANNEL_PORT; default 0 = any free)",
  ],
  [
    "--kv-abort-timeout <dur>",
    "held prefill KV is freed after this unpulled (env VLLM_NIXL_ABORT_REQUEST_TIMEOUT; default 480s)",
  ],
  ["--kv-transfer-link <link>", "transfer link preset: nvlink | infiniband (default) | roce | tcp"],
  ["--kv-transfer-bandwidth <gbps>", "link bandwidth per GPU in GB/s (overrides the preset)"],
  ["--kv-transfer-link-latency <dur>", "fixed cost of one transfer (overrides the preset)"],
  ["--kv-transfer-failure-rate <pct>", "percent of decode-leg pulls that fail (0-100, default 0)"],
  [
    "--dcgm-port <n>",
    "also serve an NVIDIA DCGM exporter's /metrics on this port (GPU utilisation, memory, power; 0 = any free)",
  ],
  // Defaults come from the config schema, so a --config file's value is not overridden by them.
  ...EDGE_FLAGS.map(([flags, description, fallback]): [string, string] => [
    flags,
    `${description} (default ${fallback})`,
  ]),
];

/** Registers `llmd sim`. */
export function registerSim(program: Command): void {
  const cmd = program
    .command("sim")
    .description("Run the vLLM-compatible model-server simulator (llm-d-inference-sim flags)");
  for (const [flags, description] of FLAGS) cmd.option(flags, description);
  cmd.action(async () => {
    const { config: file, ...flags } = explicitOptions(cmd);
    const fromFile = typeof file === "string" ? readSimConfigFile(file) : {};
    const parsed = parseSimConfig(fromFile, kvTransferEnvLayer(), flags);
    if (!parsed.ok) {
      const err = new LlmdError("invalid_option", `llmd sim: invalid configuration:\n${parsed.error}`);
      process.stderr.write(`${startupFailureLine(err)}\n`);
      process.exit(2);
    }
    const server = await startSimServer(parsed.config).catch((err: unknown) => {
      process.stderr.write(`${startupFailureLine(err)}\n`);
      process.exit(2);
    });
    process.stdout.write(`llmd sim listening on ${server.url}\n`);
    if (server.dcgmPort !== undefined)
      process.stdout.write(`llmd sim DCGM exporter on port ${server.dcgmPort} (/metrics)\n`);
    const drainMs = parsed.config["drain-timeout"];
    drainOnSignals("llmd sim", () => server.drain(drainMs).then(() => {}));
    // Started with an IPC channel (by `llmd up`): its closing means the parent is gone, even
    // SIGKILLed, and with it every client: stop at once.
    if (process.channel) process.once("disconnect", () => void server.close().then(() => process.exit(0)));
  });
}

/** Options given on the command line, keyed by their kebab-case flag names. */
function explicitOptions(cmd: Command): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const option of cmd.options) {
    const key = option.attributeName();
    if (option.long && cmd.getOptionValueSource(key) === "cli")
      out[option.long.slice(2)] = cmd.getOptionValue(key);
  }
  return out;
}
