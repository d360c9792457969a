/**
 * Composition of a live router: config → scheduler, discovery → endpoint pool, and the gateway
 * in front. Used by `llmd router`, `llmd up` and the integration tests, so all three run exactly
 * the same wiring.
 */
import { fileURLToPath } from "node:url";
import { openResponseStore } from "../responses/open.ts";
import type { ResponseStore } from "../responses/store.ts";
import type { ResponsesOptions } from "./responses-service.ts";
import { endpointPoolOptionsFromConfig, loadConfig, type RuntimeConfig } from "../config/index.ts";
import type { EndpointMetadata } from "../endpoints/endpoint.ts";
import { EndpointPool, type EndpointPoolOptions } from "../endpoints/pool.ts";
import type { TenantMap } from "../flow-control/identity.ts";
import type { DrainOutcome } from "./drain.ts";
import { type HostedPlugins, startHostedPlugins } from "./hosted-plugins.ts";
import { type Gateway, startGateway } from "./server.ts";
import type { GatewayOptions } from "./types.ts";

/** The config used when none is given: prefix-cache aware and load aware. */
export const DEFAULT_CONFIG_PATH = fileURLToPath(
  new URL("../../examples/configs/default.yaml", import.meta.url),
);

/** How often the router deletes expired responses from its store. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/** Sweeps expired responses every `intervalMs` (a failed sweep is retried at the next). */
function sweepEvery(store: ResponseStore, intervalMs: number): NodeJS.Timeout {
  return setInterval(() => void store.sweep(Date.now()).catch(() => {}), intervalMs).unref();
}

/**
 * What to start. `endpoints` or `endpointsFile` name the model servers; without either, the
 * config's `dataLayer.discovery` (llm-d `file-discovery`) must.
 */
export interface RouterOptions
  extends Omit<GatewayOptions, "scheduler" | "pool" | "admission" | "responses">,
    Pick<EndpointPoolOptions, "scrapeIntervalMs" | "log"> {
  /** EndpointPickerConfig text, or `{ path }`; default {@link DEFAULT_CONFIG_PATH}. */
  config?: string | { path: string };
  allowExperimentalPlugins?: boolean;
  /** Static endpoint list. */
  endpoints?: readonly EndpointMetadata[];
  /** llm-d `file-discovery` YAML, watched and reloaded. */
  endpointsFile?: string;
  /** Trusted edge: API key → tenant (fairness id, priority cap). */
  tenants?: TenantMap;
  /** Flow-control saturation poll (ms; default 20). */
  flowPollIntervalMs?: number;
  /** The Responses API: its store (a SQLite path or a PostgreSQL URL, opened and closed by the router). */
  responses?: RouterResponsesOptions;
}

/** `RouterOptions.responses`. */
export interface RouterResponsesOptions extends Omit<ResponsesOptions, "store"> {
  /** SQLite file path, or `postgres://…` for a store shared by several routers. */
  store: string;
}

/** A running router. */
export interface Router {
  url: string;
  port: number;
  gateway: Gateway;
  pool: EndpointPool;
  config: RuntimeConfig;
  /**
   * Graceful shutdown (`Gateway.drain`: readiness 503, new and queued requests 503
   * `rejected-shutting-down`, accepted ones finish within `timeoutMs`), then `close`.
   */
  drain(timeoutMs: number): Promise<DrainOutcome>;
  /**
   * Answers queued requests 503 `rejected-shutting-down`, stops the gateway, then discovery and
   * scraping. Idempotent.
   */
  close(): Promise<void>;
}

/** Loads the config (throws ConfigError on an invalid one), starts the pool, then the gateway. */
export async function startRouter(options: RouterOptions): Promise<Router> {
  const config = loadConfig(options.config ?? { path: DEFAULT_CONFIG_PATH }, {
    allowExperimentalPlugins: options.allowExperimentalPlugins ?? false,
  });
  // The config's data layer (discovery, scrape interval, metric names); flags win, as in llm-d.
  const pool = new EndpointPool(
    endpointPoolOptionsFromConfig(config, {
      ...(options.endpoints ? { endpoints: options.endpoints } : {}),
      ...(options.endpointsFile ? { endpointsFile: options.endpointsFile } : {}),
      ...(options.scrapeIntervalMs === undefined ? {} : { scrapeIntervalMs: options.scrapeIntervalMs }),
      ...(options.log ? { log: options.log } : {}),
    }),
  );
  await pool.start();
  let gateway: Gateway;
  let store: ResponseStore | undefined;
  let sweeper: NodeJS.Timeout | undefined;
  let hosted: HostedPlugins | undefined;
  try {
    // Plugins with background work (the precise prefix cache's KV-event subscriber).
    const started = await startHostedPlugins(config.plugins, pool);
    hosted = started;
    store = options.responses && (await openResponseStore(options.responses.store, options.responses.limits));
    sweeper = store && sweepEvery(store, SWEEP_INTERVAL_MS);
    const { responses, ...gatewayOptions } = options;
    gateway = await startGateway({
      ...gatewayOptions,
      ...(store && responses ? { responses: { ...responses, store } } : {}),
      scheduler: config.scheduler,
      pool,
      admission: {
        flowControlGate: config.featureGates.flowControl === true,
        flowControl: config.flowControl,
        plugins: config.plugins,
        ...(options.tenants ? { tenants: options.tenants } : {}),
        ...(options.flowPollIntervalMs ? { pollIntervalMs: options.flowPollIntervalMs } : {}),
      },
    });
    started.register(gateway.metrics.registry);
  } catch (err) {
    clearInterval(sweeper);
    await store?.close();
    await hosted?.close();
    await pool.stop();
    throw err;
  }
  let closing: Promise<void> | undefined;
  const router: Router = {
    url: gateway.url,
    port: gateway.port,
    gateway,
    pool,
    config,
    drain: async (timeoutMs) => {
      const outcome = await gateway.drain(timeoutMs);
      await router.close();
      return outcome;
    },
    close: () => {
      closing ??= (async () => {
        await gateway.close();
        clearInterval(sweeper);
        await store?.close();
        await hosted?.close();
        await pool.stop();
      })();
      return closing;
    },
  };
  return router;
}
