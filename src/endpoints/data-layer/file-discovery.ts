/**
 * `file-discovery` (llm-d, beta): endpoints from llm-d's YAML file instead of Kubernetes. The pool
 * runs it as its discovery source (sources/file-discovery.ts).
 */
import { resolve } from "node:path";
import { z } from "zod";
import { fileDiscoverySource } from "../sources/file-discovery.ts";
import { dataLayerDefinition } from "./plugin.ts";

/** llm-d's `file-discovery` parameters (`watchFile` is off by default, as in llm-d). */
export const fileDiscoveryParameters = z.strictObject({
  /** Endpoints file; a relative path is taken from the working directory. */
  path: z
    .string({ error: "expected the endpoints file path" })
    .min(1, { error: "expected the endpoints file path" }),
  watchFile: z.boolean().default(false),
});

/** Validated `file-discovery` parameters. */
export type FileDiscoveryParams = z.output<typeof fileDiscoveryParameters>;

/** Registry entry for `file-discovery`. */
export const fileDiscovery = dataLayerDefinition<FileDiscoveryParams>({
  type: "file-discovery",
  kind: "discovery",
  description: "Endpoints from llm-d's endpoints YAML (path), reloaded on change when watchFile",
  parameters: fileDiscoveryParameters,
  configure: (p, draft) => {
    draft.source = fileDiscoverySource({
      path: resolve(p.path),
      watchFile: p.watchFile,
      ...(draft.log ? { log: draft.log } : {}),
    });
  },
});
