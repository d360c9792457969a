/**
 * llm-d's file-discovery format:
 *
 *     endpoints:
 *     - {name: vllm-0, namespace: default, address: 10.0.0.5, port: "8000", labels: {llm-d.ai/role: decode}}
 *
 * A data-parallel server lists one port per rank (`port: "8000,8001"`): each rank becomes its own
 * endpoint keyed `namespace/name-rank-N` with `dpRank: N`.
 */
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { LlmdError } from "../../api/errors.ts";
import type { EndpointMetadata } from "../endpoint.ts";

/** Largest endpoints file accepted, in bytes (llm-d's limit). */
export const MAX_ENDPOINTS_FILE_BYTES = 1024 * 1024;

const PORT_LIST = /^\s*\d{1,5}(\s*,\s*\d{1,5})*\s*$/;

const entrySchema = z.strictObject({
  name: z.string().min(1),
  namespace: z.string().min(1).default("default"),
  address: z.string().min(1),
  port: z
    .union([z.string(), z.number().int()])
    .transform(String)
    .refine((p) => PORT_LIST.test(p) && p.split(",").every(isPort), {
      message: 'expected a port 1-65535 or a comma list of ports ("8000,8001")',
    }),
  labels: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).default({}),
});

const fileSchema = z.strictObject({ endpoints: z.array(entrySchema) });

function isPort(text: string): boolean {
  const port = Number(text);
  return port >= 1 && port <= 65535;
}

/**
 * Parses an endpoints file into metadata, one record per rank. Throws an `LlmdError`
 * (`invalid_endpoints_file`) naming the offending path, e.g. `endpoints[1].port: …`.
 */
export function parseEndpointsFile(text: string): EndpointMetadata[] {
  if (Buffer.byteLength(text) > MAX_ENDPOINTS_FILE_BYTES)
    throw invalid(`larger than ${MAX_ENDPOINTS_FILE_BYTES} bytes`);
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (err) {
    throw invalid(`not YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = fileSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(`${formatPath(issue.path)}: ${issue.message}`);
  }
  const endpoints = parsed.data.endpoints.flatMap(expandRanks);
  const seen = new Set<string>();
  for (const endpoint of endpoints) {
    if (seen.has(endpoint.key)) throw invalid(`duplicate endpoint ${endpoint.key}`);
    seen.add(endpoint.key);
  }
  return endpoints;
}

function expandRanks(entry: z.infer<typeof entrySchema>): EndpointMetadata[] {
  const ports = entry.port.split(",").map((p) => Number(p.trim()));
  const base = { name: entry.name, namespace: entry.namespace, address: entry.address, labels: entry.labels };
  if (ports.length === 1) return [{ ...base, key: `${entry.namespace}/${entry.name}`, port: ports[0]! }];
  return ports.map((port, dpRank) => ({
    ...base,
    key: `${entry.namespace}/${entry.name}-rank-${dpRank}`,
    port,
    dpRank,
  }));
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : `${out ? "." : ""}${String(part)}`;
  return out || "(root)";
}

function invalid(why: string): LlmdError {
  return new LlmdError("invalid_endpoints_file", `invalid endpoints file: ${why}`);
}
