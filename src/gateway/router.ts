/**
 * Composition of a live router: config → scheduler, discovery → endpoint pool, and the gateway
 * in front. Used by `llmd router`, `llmd up` and the integration tests, so all three run exactly
 * the same wiring.
 */
import { fileURLToPath } from "node:url";
import { loadConfig, type RuntimeConfig } from "../config/index.ts";
import type { EndpointMetadata } from "../endpoints/endpoint.ts";
import { EndpointPool, type EndpointPoolOptions } from "../endpoints/pool.ts";
import { fileDiscoverySource } from "../endpoints/sources/file-discovery.ts";
import type { EndpointSource } from "../endpoints/sources/source.ts";
import { staticSource } from "../endpoints/sources/static-source.ts";
import { type Gateway, startGateway } from "./server.ts";
import type { GatewayOptions } from "./types.ts";

/** The config used when none is given: prefix-cache aware and load aware. */
export const DEFAULT_CONFIG_PATH = fileURLToPath(
  new URL("../../examples/configs/default.yaml", import.meta.url),
);

/** What to start. Exactly one of `endpoints` / `endpointsFile` names the model servers. */
export interface RouterOptions
  extends Omit<GatewayOptions, "scheduler" | "pool">,
    Pick<EndpointPoolOptions, "scrapeIntervalMs" | "log"> {
  /** EndpointPickerConfig text, or `{ path }`; default {@link DEFAULT_CONFIG_PATH}. */
  config?: string | { path: string };
  allowExperimentalPlugins?: boolean;
  /** Static endpoint list. */
  endpoints?: readonly EndpointMetadata[];
  /** llm-d `file-discovery` YAML, watched and reloaded. */
  endpointsFile?: string;
}

/** A running router. */
export interface Router {
  url: string;
  port: number;
  gateway: Gateway;
  pool: EndpointPool;
  config: RuntimeConfig;
  /** Stops the gateway, then discovery and scraping. */
  close(): Promise<void>;
}

function endpointSource(options: RouterOptions): EndpointSource {
  if (options.endpointsFile) return fileDiscoverySource({ path: options.endpointsFile });
  if (options.endpoints && options.endpoints.length > 0) return staticSource(options.endpoints);
  throw new Error("no endpoints: give --endpoints, --endpoints-file or LLMD_ENDPOINTS");
}

/** Loads the config (throws ConfigError on an invalid one), starts the pool, then the gateway. */
export async function startRouter(options: RouterOptions): Promise<Router> {
  const config = loadConfig(options.config ?? { path: DEFAULT_CONFIG_PATH }, {
    allowExperimentalPlugins: options.allowExperimentalPlugins ?? false,
  });
  const pool = new EndpointPool({
    source: endpointSource(options),
    ...(options.scrapeIntervalMs === undefined ? {} : { scrapeIntervalMs: options.scrapeIntervalMs }),
    ...(options.log ? { log: options.log } : {}),
  });
  await pool.start();
  let gateway: Gateway;
  try {
    gateway = await startGateway({ ...options, scheduler: config.scheduler, pool });
  } catch (err) {
    await pool.stop();
    throw err;
  }
  return {
    url: gateway.url,
    port: gateway.port,
    gateway,
    pool,
    config,
    close: async () => {
      await gateway.close();
      await pool.stop();
    },
  };
}
