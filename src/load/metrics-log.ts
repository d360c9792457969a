/**
 * `llmd bench --metrics-log`: the router's flow-control gauges and each endpoint's waiting queue,
 * scraped from `<url>/metrics` once a second while a live run lasts, so a run can be studied second
 * by second beside its per-request records (`--records`).
 */
import { scanSamples } from "../endpoints/prom-text.ts";

/** The gauges kept (llm-d names); other series on the page are skipped. */
export const LOGGED_METRICS = [
  "llm_d_epp_flow_control_pool_saturation",
  "llm_d_epp_flow_control_stale_endpoints",
  "llm_d_epp_flow_control_queue_size",
  "llm_d_epp_per_endpoint_queue_size",
] as const;

/** One scrape: `series` maps `name{labels}` to its value; `error` when the scrape failed. */
export interface MetricsSample {
  /** Workload ms since the bench started. */
  atMs: number;
  series: Record<string, number>;
  error?: string;
}

/** A running log; `stop` ends it after the scrape in progress and returns every sample. */
export interface MetricsLog {
  stop(): Promise<MetricsSample[]>;
}

/** Starts scraping `url`/metrics every `intervalMs`; `now` gives workload ms. */
export function startMetricsLog(url: string, now: () => number, intervalMs = 1000): MetricsLog {
  const samples: MetricsSample[] = [];
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const tick = (): void => {
    inFlight = scrape(`${url}/metrics`, now(), intervalMs).then((sample) => {
      samples.push(sample);
      if (!stopped) timer = setTimeout(tick, intervalMs);
    });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
      return samples;
    },
  };
}

async function scrape(url: string, atMs: number, timeoutMs: number): Promise<MetricsSample> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    const series: Record<string, number> = {};
    scanSamples(text, LOGGED_METRICS, (i, start, end, value) => {
      series[`${LOGGED_METRICS[i]}{${text.slice(start, end)}}`] = value;
    });
    return { atMs, series };
  } catch (err) {
    return { atMs, series: {}, error: String(err) };
  }
}
