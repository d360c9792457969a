/**
 * `llmd router`: the gateway in front of model servers named by `--endpoints`, `--endpoints-file`
 * (llm-d file-discovery YAML, reloaded on change) or `LLMD_ENDPOINTS`, scheduling with an llm-d
 * EndpointPickerConfig (`--config`; default examples/configs/default.yaml).
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { endpointsFromEnv, parseEndpointList } from "../../endpoints/sources/static-source.ts";
import { parseObjectives, TenantMap } from "../../flow-control/identity.ts";
import { DEFAULT_MAX_BODY_BYTES } from "../../api/request-body.ts";
import { type Router, type RouterResponsesOptions, startRouter } from "../../gateway/router.ts";
import { DEFAULT_STORE_PATH } from "../../responses/open.ts";
import { DEFAULT_ID_PROMPT_BYTES } from "../../tokenizer/id-prompts.ts";
import { LlmdError } from "../../api/errors.ts";
import { parseDurationMs } from "../../core/units.ts";
import { type EdgeFlags, edgeOptions, withEdgeFlags } from "../edge-flags.ts";
import { numberFlag } from "../flags.ts";
import { type PdFlags, pdOptionsFrom, withPdFlags } from "../pd-flags.ts";
import { drainOnSignals, drainTimeoutMs, withDrainTimeout } from "../shutdown.ts";

/** Parsed `llmd router` flags. */
interface RouterFlags extends GatewayFlags, EdgeFlags, PdFlags {
  config?: string;
  endpoints?: string;
  endpointsFile?: string;
  port: string;
  host: string;
  allowExperimentalPlugins?: boolean;
  maxBodyBytes: string;
  drainTimeout: string;
}

/** Gateway flags shared by `llmd router` and `llmd up`. */
export interface GatewayFlags {
  objectives?: string;
  tenants?: string;
  streamFlushMs: string;
  idPromptBytes: string;
  responsesStore: string;
  responsesBackend: string;
  responsesTtl: string;
}

/**
 * Router options from `--objectives` (InferenceObjective YAML), `--tenants` (tenant map YAML),
 * `--stream-flush-ms`, `--id-prompt-bytes` and the `--responses-*` flags.
 */
export function gatewayOptions(flags: GatewayFlags): {
  objectives?: ReadonlyMap<string, number>;
  tenants?: TenantMap;
  streamFlushMs: number;
  idPromptBytes: number;
  responses?: RouterResponsesOptions;
} {
  return {
    ...(flags.objectives ? { objectives: parseObjectives(readFileSync(flags.objectives, "utf8")) } : {}),
    ...(flags.tenants ? { tenants: TenantMap.parse(readFileSync(flags.tenants, "utf8")) } : {}),
    streamFlushMs: numberFlag("stream-flush-ms", flags.streamFlushMs),
    idPromptBytes: numberFlag("id-prompt-bytes", flags.idPromptBytes, { min: 0, integer: true }),
    ...responsesOptions(flags),
  };
}

/** The Responses API from `--responses-store` (`off` disables it), `--responses-backend`, `--responses-ttl`. */
function responsesOptions(flags: GatewayFlags): { responses?: RouterResponsesOptions } {
  if (flags.responsesStore === "off") return {};
  const backend = flags.responsesBackend;
  if (backend !== "chat" && backend !== "responses")
    throw new LlmdError(
      "invalid_option",
      `--responses-backend: expected chat or responses, got ${JSON.stringify(backend)}`,
    );
  const ttlMs = parseDurationMs(flags.responsesTtl);
  if (ttlMs === undefined || ttlMs <= 0)
    throw new LlmdError(
      "invalid_option",
      `--responses-ttl: expected a duration like "720h", got ${JSON.stringify(flags.responsesTtl)}`,
    );
  return { responses: { store: flags.responsesStore, backend, limits: { ttlMs } } };
}

/** Adds `--objectives`, `--tenants`, `--stream-flush-ms`, `--id-prompt-bytes` and the `--responses-*` flags to a command. */
export function withGatewayFlags(command: Command): Command {
  return command
    .option(
      "--stream-flush-ms <ms>",
      "after a stream's first token, relay its chunks at most every ms, coalesced (0 = those that arrive together as one write)",
      "0",
    )
    .option(
      "--id-prompt-bytes <n>",
      "token-id prompts held so that a prompt continuing one keeps its block keys (0 = none held)",
      String(DEFAULT_ID_PROMPT_BYTES),
    )
    .option(
      "--objectives <file>",
      "InferenceObjective YAML (llm-d.ai/v1alpha2): x-llm-d-inference-objective name → priority",
    )
    .option(
      "--tenants <file>",
      "trusted-edge tenant map YAML {tenants: [{name, apiKeys, fairnessId?, objective?, maxPriority?}]}",
    )
    .option(
      "--responses-store <path|url>",
      "Responses API store: a SQLite file, a postgres:// URL shared by several routers, or off",
      DEFAULT_STORE_PATH,
    )
    .option(
      "--responses-backend <api>",
      "what model servers speak for Responses turns: chat (chat completions) or responses (stateless /v1/responses)",
      "chat",
    )
    .option("--responses-ttl <duration>", "how long stored responses are kept", "720h");
}

/**
 * Drains `router` on the first SIGINT/SIGTERM (accepted requests get up to `drainMs`), then runs
 * `afterStop` and exits 0; a second signal exits at once.
 */
export function stopOnSignals(
  router: Router,
  drainMs: number,
  afterStop: () => Promise<void> = async () => {},
): void {
  drainOnSignals("llmd router", async () => {
    await router.drain(drainMs);
    await afterStop();
  });
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
  const flagged = withPdFlags(withEdgeFlags(withDrainTimeout(withGatewayFlags(command))));
  flagged.action(async (flags: RouterFlags) => {
    const drainMs = drainTimeoutMs(flags);
    const edge = edgeOptions(flags);
    const endpoints = flags.endpoints ? parseEndpointList(flags.endpoints) : endpointsFromEnv();
    const router = await startRouter({
      ...(flags.config ? { config: { path: flags.config } } : {}),
      ...(endpoints ? { endpoints } : {}),
      ...(flags.endpointsFile ? { endpointsFile: flags.endpointsFile } : {}),
      port: numberFlag("port", flags.port, { integer: true }),
      host: flags.host,
      allowExperimentalPlugins: flags.allowExperimentalPlugins === true,
      maxBodyBytes: numberFlag("max-body-bytes", flags.maxBodyBytes, { min: 1, integer: true }),
      ...edge,
      ...gatewayOptions(flags),
      pd: pdOptionsFrom(flags),
    });
    process.stdout.write(`llmd router listening on http://127.0.0.1:${router.port}\n`);
    stopOnSignals(router, drainMs);
  });
}
