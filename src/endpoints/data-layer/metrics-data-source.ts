/**
 * `metrics-data-source` (llm-d, beta, injected by default): scrapes each endpoint's Prometheus page.
 * Parameters and defaults are llm-d's; they become the pool's scrape options.
 */
import { z } from "zod";
import { durationMsSchema } from "../../core/units.ts";
import { dataLayerDefinition } from "./plugin.ts";

const filePath = z.string().min(1, { error: "expected a file path" });

const PORT_ERROR = { error: "expected a port 1-65535" };
/** A port as a number or, as Kubernetes manifests often write it, a numeric string. */
export const port = z
  .union(
    [z.number(PORT_ERROR), z.string(PORT_ERROR).regex(/^\d+$/, PORT_ERROR).transform(Number)],
    PORT_ERROR,
  )
  .pipe(z.number().int(PORT_ERROR).min(1, PORT_ERROR).max(65535, PORT_ERROR));

/** llm-d's `metrics-data-source` parameters. */
export const metricsDataSourceParameters = z
  .strictObject({
    scheme: z.enum(["http", "https"]).default("http"),
    path: z.string().startsWith("/", { error: 'expected a URL path starting with "/"' }).default("/metrics"),
    insecureSkipVerify: z.boolean().default(true),
    caCertPath: filePath.optional(),
    clientCertPath: filePath.optional(),
    clientKeyPath: filePath.optional(),
    /** Scrape period in ms, rounded to a multiple of the base tick; absent = every tick. */
    interval: durationMsSchema.optional(),
    /** Scrape a metrics port other than the serving port. */
    port: port.optional(),
    /** Families to parse; llmd's parser reads only the extractor's families anyway. */
    families: z.array(z.string().min(1)).optional(),
  })
  .refine((p) => (p.clientCertPath === undefined) === (p.clientKeyPath === undefined), {
    message: "clientCertPath and clientKeyPath must be set together",
  });

/** Validated `metrics-data-source` parameters. */
export type MetricsDataSourceParams = z.output<typeof metricsDataSourceParameters>;

/** Registry entry for `metrics-data-source`. */
export const metricsDataSource = dataLayerDefinition<MetricsDataSourceParams>({
  type: "metrics-data-source",
  kind: "data-source",
  description: "Scrapes each endpoint's Prometheus /metrics (scheme, path, port, interval, TLS)",
  parameters: metricsDataSourceParameters,
  extractors: ["core-metrics-extractor"],
  configure: (p, draft) => {
    draft.scheme = p.scheme;
    draft.metricsPath = p.path;
    draft.insecureSkipVerify = p.insecureSkipVerify;
    if (p.port !== undefined) draft.metricsPort = p.port;
    if (p.interval !== undefined) draft.scrapeIntervalMs = p.interval;
    const { caCertPath, clientCertPath, clientKeyPath } = p;
    if (caCertPath || clientCertPath) draft.tlsFiles = { caCertPath, clientCertPath, clientKeyPath };
  },
});
