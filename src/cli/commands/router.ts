/**
 * `llmd router`: the gateway in front of model servers named by `--endpoints`, `--endpoints-file`
 * (llm-d file-discovery YAML, reloaded on change) or `LLMD_ENDPOINTS`, scheduling with an llm-d
 * EndpointPickerConfig (`--config`; default examples/configs/default.yaml).
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { endpointsFromEnv, parseEndpointList } from "../../endpoints/sources/static-source.ts";
import { parseObjectives, TenantMap } from "../../flow-control/identity.ts";
import { DEFAULT_MAX_BODY_BYTES } from "../../gateway/body.ts";
import { type Router, startRouter } from "../../gateway/router.ts";

/** Parsed `llmd router` flags. */
interface RouterFlags extends IdentityFlags {
  config?: string;
  endpoints?: string;
  endpointsFile?: string;
  port: string;
  host: string;
  allowExperimentalPlugins?: boolean;
  maxBodyBytes: string;
}

/** Identity flags shared by `llmd router` and `llmd up`. */
export interface IdentityFlags {
  objectives?: string;
  tenants?: string;
}

/** Router options from `--objectives` (InferenceObjective YAML) and `--tenants` (tenant map YAML). */
export function identityOptions(flags: IdentityFlags): {
  objectives?: ReadonlyMap<string, number>;
  tenants?: TenantMap;
} {
  return {
    ...(flags.objectives ? { objectives: parseObjectives(readFileSync(flags.objectives, "utf8")) } : {}),
    ...(flags.tenants ? { tenants: TenantMap.parse(readFileSync(flags.tenants, "utf8")) } : {}),
  };
}

/** Adds `--objectives` and `--tenants` to a command. */
export function withIdentityFlags(command: Command): Command {
  return command
    .option(
      "--objectives <file>",
      "InferenceObjective YAML (llm-d.ai/v1alpha2): x-llm-d-inference-objective name → priority",
    )
    .option(
      "--tenants <file>",
      "trusted-edge tenant map YAML {tenants: [{name, apiKeys, fairnessId?, objective?, maxPriority?}]}",
    );
}

/** Stops `router` on SIGINT/SIGTERM, then runs `afterStop` and exits 0. */
export function stopOnSignals(router: Router, afterStop: () => Promise<void> = async () => {}): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void router
      .close()
      .then(afterStop)
      .then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/** Registers `llmd router`. */
export function registerRouter(program: Command): void {
  const command = program
    .command("router")
    .description("Run the OpenAI-compatible gateway with llm-d scheduling in front of model servers")
    .option("--config <file>", "EndpointPickerConfig YAML (default: prefix-aware + load-aware)")
    .option(
      "--endpoints <urls>",
      "comma-separated model-server URLs, e.g. http://127.0.0.1:8001,http://127.0.0.1:8002",
    )
    .option(
      "--endpoints-file <file>",
      "llm-d file-discovery YAML (endpoints: [{name, address, port, labels}]), watched",
    )
    .option("--port <n>", "port to listen on (0 = any free port)", "8080")
    .option("--host <addr>", "address to bind", "0.0.0.0")
    .option("--allow-experimental-plugins", "allow alpha plugins in the config")
    .option("--max-body-bytes <n>", "largest request body; bigger gets 413", String(DEFAULT_MAX_BODY_BYTES));
  withIdentityFlags(command).action(async (flags: RouterFlags) => {
    const endpoints = flags.endpoints ? parseEndpointList(flags.endpoints) : endpointsFromEnv();
    const router = await startRouter({
      ...(flags.config ? { config: { path: flags.config } } : {}),
      ...(endpoints ? { endpoints } : {}),
      ...(flags.endpointsFile ? { endpointsFile: flags.endpointsFile } : {}),
      port: Number(flags.port),
      host: flags.host,
      allowExperimentalPlugins: flags.allowExperimentalPlugins === true,
      maxBodyBytes: Number(flags.maxBodyBytes),
      ...identityOptions(flags),
    });
    process.stdout.write(`llmd router listening on http://127.0.0.1:${router.port}\n`);
    stopOnSignals(router);
  });
}
