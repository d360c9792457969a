/**
 * `llmd up` (what `npm start` runs): N `llmd sim` replicas as child processes, then the router in
 * front of them with the default config. Ctrl-C / SIGTERM drains the router, then stops every child
 * (each drains too); a second signal exits at once.
 */
import type { Command } from "commander";
import { parseEndpointList } from "../../endpoints/sources/static-source.ts";
import { startRouter } from "../../gateway/router.ts";
import { startSimReplicas } from "../sim-replicas.ts";
import { type GatewayFlags, gatewayOptions, stopOnSignals, withGatewayFlags } from "./router.ts";
import { type EdgeFlags, edgeOptions, withEdgeFlags } from "../edge-flags.ts";
import { numberFlag } from "../flags.ts";
import { drainTimeoutMs, withDrainTimeout } from "../shutdown.ts";

/** How long past their drain timeout simulators get to exit before SIGKILL. */
const SIM_STOP_MARGIN_MS = 5000;

/** Parsed `llmd up` flags. */
interface UpFlags extends GatewayFlags, EdgeFlags {
  replicas: string;
  profile: string;
  model: string;
  speed: string;
  streamInterval: string;
  maxModelLen?: string;
  tokenizer?: string;
  port: string;
  simBasePort: string;
  config?: string;
  allowExperimentalPlugins?: boolean;
  drainTimeout: string;
}

function curlExample(url: string, model: string): string {
  const body = JSON.stringify({ model, messages: [{ role: "user", content: "Hello!" }], max_tokens: 32 });
  return `curl ${url}/v1/chat/completions -H 'content-type: application/json' -d '${body}'`;
}

async function up(flags: UpFlags): Promise<void> {
  const drainMs = drainTimeoutMs(flags);
  const edge = edgeOptions(flags);
  const sims = await startSimReplicas({
    replicas: numberFlag("replicas", flags.replicas, { min: 1, integer: true }),
    basePort: numberFlag("sim-base-port", flags.simBasePort, { integer: true }),
    simArgs: [
      "--model",
      flags.model,
      "--profile",
      flags.profile,
      "--speed",
      flags.speed,
      "--stream-interval",
      flags.streamInterval,
      ...(flags.maxModelLen ? ["--max-model-len", flags.maxModelLen] : []),
      ...(flags.tokenizer ? ["--tokenizer", flags.tokenizer] : []),
      "--host",
      "127.0.0.1",
      "--drain-timeout",
      `${drainMs}ms`,
    ],
  });
  let router: Awaited<ReturnType<typeof startRouter>>;
  try {
    router = await startRouter({
      ...(flags.config ? { config: { path: flags.config } } : {}),
      endpoints: parseEndpointList(sims.urls.join(",")),
      port: numberFlag("port", flags.port, { integer: true }),
      host: "0.0.0.0",
      allowExperimentalPlugins: flags.allowExperimentalPlugins === true,
      ...edge,
      ...gatewayOptions(flags),
    });
  } catch (err) {
    await sims.stop();
    throw err;
  }
  const url = `http://localhost:${router.port}`;
  process.stdout.write(
    `llmd up: ${sims.urls.length} simulators (${sims.urls.join(", ")})\n` +
      `llmd router listening on ${url}\n\nTry:\n  ${curlExample(url, flags.model)}\n\nCtrl-C stops everything.\n`,
  );
  // The router drains first, so the simulators finish what it sent them; then they drain too
  // (nothing new reaches them) and get the same timeout before being killed.
  stopOnSignals(router, drainMs, () => sims.stop(drainMs + SIM_STOP_MARGIN_MS));
}

/** Registers `llmd up`. */
export function registerUp(program: Command): void {
  const command = program
    .command("up")
    .description("Start N simulated vLLM replicas and the router in front of them")
    .option("--replicas <n>", "simulator replicas", "4")
    .option("--profile <name>", "simulator timing profile", "h200-llama3-8b")
    .option("--model <name>", "model the simulators serve", "meta-llama/Llama-3.1-8B-Instruct")
    .option("--speed <x>", "simulated time runs x times faster than wall time", "1")
    .option("--stream-interval <n>", "simulators stream every n tokens (vLLM's --stream-interval)", "1")
    .option(
      "--max-model-len <tokens>",
      "simulators' context length (vLLM's --max-model-len; default: the profile's)",
    )
    .option(
      "--tokenizer <name>",
      "what the simulators count usage with: char4 | llama3.1 (default: the profile's)",
    )
    .option("--port <n>", "router port (0 = any free port)", "8080")
    .option("--sim-base-port <n>", "first simulator port (replica i on base+i); 0 = any free ports", "8001")
    .option("--config <file>", "EndpointPickerConfig YAML (default: prefix-aware + load-aware)")
    .option("--allow-experimental-plugins", "allow alpha plugins in the config");
  withEdgeFlags(withDrainTimeout(withGatewayFlags(command))).action(up);
}
