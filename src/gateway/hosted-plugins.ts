/**
 * The wall-clock host's side of `HostedPlugin` (scheduler/framework/hosted.ts): start each after
 * the endpoint pool, hand it the pool's endpoints now and on every change, export its numbers on
 * `/metrics` (labelled `plugin_name`), and close it on shutdown.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { EndpointPool } from "../endpoints/pool.ts";
import type { Plugin } from "../plugin/types.ts";
import { type HostedPlugin, isHostedPlugin, type PluginMetric } from "../scheduler/framework/hosted.ts";

/** Running hosted plugins; `close` stops them all. */
export interface HostedPlugins {
  close(): Promise<void>;
}

/** Starts the config's hosted plugins (a failure closes those started and rejects). */
export async function startHostedPlugins(
  plugins: ReadonlyMap<string, Plugin>,
  pool: EndpointPool,
): Promise<HostedPlugins & { register(registry: Registry): void }> {
  const hosted = [...plugins.values()].filter(isHostedPlugin);
  const started: HostedPlugin[] = [];
  const closeAll = async () => {
    await Promise.all(started.map((p) => p.close()));
  };
  try {
    for (const plugin of hosted) {
      await plugin.start();
      started.push(plugin);
      plugin.endpointsChanged(pool.all());
      pool.on("change", () => plugin.endpointsChanged(pool.all()));
    }
  } catch (err) {
    await closeAll();
    throw err;
  }
  return { close: closeAll, register: (registry) => registerPluginMetrics(registry, started) };
}

/** One Prometheus family per metric name, a series per plugin instance, read at scrape time. */
function registerPluginMetrics(registry: Registry, plugins: readonly HostedPlugin[]): void {
  const byName = new Map<string, { metric: PluginMetric; plugin: string }[]>();
  for (const plugin of plugins)
    for (const metric of plugin.metrics()) {
      const list = byName.get(metric.name) ?? [];
      list.push({ metric, plugin: plugin.name });
      byName.set(metric.name, list);
    }
  for (const [name, series] of byName) {
    const { help, type } = series[0]!.metric;
    const common = { name, help, labelNames: ["plugin_name"], registers: [registry] };
    if (type === "gauge")
      new Gauge({
        ...common,
        collect() {
          for (const s of series) this.set({ plugin_name: s.plugin }, s.metric.value());
        },
      });
    else
      new Counter({
        ...common,
        collect() {
          this.reset();
          for (const s of series) this.inc({ plugin_name: s.plugin }, s.metric.value());
        },
      });
  }
}
