/**
 * `llmd sidecar`: llm-d's routing sidecar for a decode model server, with its flag names where
 * they apply (reference §5.2). Only the `nixlv2` connector (vLLM's NixlConnector protocol) is
 * supported; another `--kv-connector` is a startup error. SIGTERM/SIGINT drain it.
 */
import type { Command } from "commander";
import { LlmdError } from "../../api/errors.ts";
import { fileDiscoverySource } from "../../endpoints/sources/file-discovery.ts";
import { parseEndpointList, staticSource } from "../../endpoints/sources/static-source.ts";
import { PoolAllowList } from "../../gateway/prefill-allow-list.ts";
import { startSidecar } from "../../gateway/sidecar.ts";
import { numberFlag } from "../flags.ts";
import { type PrefillRetryFlags, prefillRetryFrom, withPrefillRetryFlags } from "../pd-flags.ts";
import { drainOnSignals, drainTimeoutMs, withDrainTimeout } from "../shutdown.ts";

/** Parsed `llmd sidecar` flags. */
interface SidecarFlags extends PrefillRetryFlags {
  port: string;
  host: string;
  modelServerPort?: string;
  vllmPort?: string;
  kvConnector: string;
  enableSsrfProtection?: boolean;
  endpoints?: string;
  endpointsFile?: string;
  enablePrefillerSampling?: boolean;
  dataParallelSize: string;
  drainTimeout: string;
}

const SUPPORTED_CONNECTORS = ["nixlv2"];

/** The allowed prefill pool of `--enable-ssrf-protection`, from `--endpoints` or `--endpoints-file`. */
function allowListFrom(flags: SidecarFlags): PoolAllowList | undefined {
  if (!flags.enableSsrfProtection) return undefined;
  if (flags.endpointsFile) return new PoolAllowList(fileDiscoverySource({ path: flags.endpointsFile }));
  if (flags.endpoints) return new PoolAllowList(staticSource(parseEndpointList(flags.endpoints)));
  throw new LlmdError(
    "invalid_option",
    "--enable-ssrf-protection: name the allowed pool with --endpoints or --endpoints-file",
  );
}

function checkConnector(connector: string): void {
  if (SUPPORTED_CONNECTORS.includes(connector)) return;
  throw new LlmdError(
    "invalid_option",
    `--kv-connector: only ${SUPPORTED_CONNECTORS.join(", ")} is supported, got ${JSON.stringify(connector)}`,
  );
}

/** Registers `llmd sidecar`. */
export function registerSidecar(program: Command): void {
  const command = program
    .command("sidecar")
    .description("Run llm-d's P/D routing sidecar in front of a decode model server")
    .option("--port <n>", "port to listen on (rank i of --data-parallel-size on port+i)", "8000")
    .option("--host <addr>", "address to bind", "0.0.0.0")
    .option("--model-server-port <n>", "the local decode model server's port (default 8200)")
    .option("--vllm-port <n>", "alias of --model-server-port")
    .option("--kv-connector <name>", "KV transfer protocol of the two legs (only nixlv2)", "nixlv2")
    .option("--enable-ssrf-protection", "send prefill legs only to endpoints of the pool (403 otherwise)")
    .option("--endpoints <urls>", "the pool for --enable-ssrf-protection: comma-separated model-server URLs")
    .option(
      "--endpoints-file <file>",
      "the pool for --enable-ssrf-protection: llm-d file-discovery YAML, watched",
    )
    .option("--enable-prefiller-sampling", "pick a random entry of a comma-separated x-prefiller-host-port")
    .option(
      "--data-parallel-size <n>",
      "data-parallel ranks: rank i listens on port+i, proxies to model-server-port+i",
      "1",
    );
  withPrefillRetryFlags(withDrainTimeout(command)).action(async (flags: SidecarFlags) => {
    checkConnector(flags.kvConnector);
    const drainMs = drainTimeoutMs(flags);
    const allowList = allowListFrom(flags);
    await allowList?.start();
    const sidecar = await startSidecar({
      port: numberFlag("port", flags.port, { integer: true }),
      host: flags.host,
      modelServerPort: numberFlag("model-server-port", flags.vllmPort ?? flags.modelServerPort ?? "8200", {
        min: 1,
        integer: true,
      }),
      dataParallelSize: numberFlag("data-parallel-size", flags.dataParallelSize, { min: 1, integer: true }),
      retry: prefillRetryFrom(flags),
      prefillerSampling: flags.enablePrefillerSampling === true,
      ...(allowList ? { allowList } : {}),
    });
    for (const url of sidecar.urls) process.stdout.write(`llmd sidecar listening on ${url}\n`);
    drainOnSignals("llmd sidecar", async () => {
      await sidecar.drain(drainMs);
      await allowList?.stop();
    });
  });
}
