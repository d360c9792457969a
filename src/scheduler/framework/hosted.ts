/**
 * Plugins with background work in a live host (sockets, subscriptions). Constructing one opens
 * nothing, so loading a config (tests, `llmd plugins`, the fleet simulator) never binds a port: the
 * wall-clock host starts it after its endpoint pool, tells it about every change of the pool, reads
 * its metrics for `/metrics`, and closes it on shutdown.
 */
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type { IndexKvEvent } from "../../kv-index/index.ts";
import type { Plugin } from "../../plugin/types.ts";

/** One exported number, read when `/metrics` is scraped. */
export interface PluginMetric {
  /** Full Prometheus name, e.g. `llm_d_epp_kv_cache_index_size_bytes`. */
  name: string;
  help: string;
  type: "gauge" | "counter";
  value(): number;
}

/** See the module comment. */
export interface HostedPlugin extends Plugin {
  /** Opens what the plugin needs; rejects when it cannot (the host then fails to start). */
  start(): Promise<void>;
  /** The pool's endpoints, after `start` and after every change. */
  endpointsChanged(endpoints: readonly Endpoint[]): void;
  close(): Promise<void>;
  metrics(): readonly PluginMetric[];
}

/** True for a plugin instance implementing {@link HostedPlugin}. */
export function isHostedPlugin(plugin: Plugin): plugin is HostedPlugin {
  const p = plugin as Partial<HostedPlugin>;
  return (
    typeof p.start === "function" && typeof p.endpointsChanged === "function" && typeof p.close === "function"
  );
}

/**
 * A plugin fed the engines' KV events. Live, its own subscriber (opened by `start`) hands it each
 * endpoint's decoded batches; the fleet simulator, which starts no plugin, hands it the engines'
 * batches itself after a publisher-to-router delay. Both go through `kvEvents`, on the host's clock.
 */
export interface KvEventConsumer extends Plugin {
  kvEvents(events: readonly IndexKvEvent[], endpointKey: string, model: string): void;
}

/** True for a plugin instance implementing {@link KvEventConsumer}. */
export function isKvEventConsumer(plugin: Plugin): plugin is KvEventConsumer {
  return typeof (plugin as Partial<KvEventConsumer>).kvEvents === "function";
}
