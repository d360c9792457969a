/**
 * The model servers' KV transfer configuration agrees: one connector, roles that take the legs
 * the endpoint's `llm-d.ai/role` sends them (prefill → `kv_producer` or `kv_both`, decode →
 * `kv_consumer` or `kv_both`), and distinct engine ids (a decode names the prefill it pulls from by
 * engine id). Read from the simulator's `llmd_sim_kv_transfer_config_info`; a server that does not
 * expose it (vLLM) is not verified.
 */
import { type Finding, finding, orPass } from "./findings.ts";
import { type EndpointProbe, TRANSFER_INFO_METRIC } from "./probe.ts";
import { canDecode, canPrefill } from "./roles.ts";

const CHECK = "transfer-config";
const PRODUCES = new Set(["kv_producer", "kv_both"]);
const CONSUMES = new Set(["kv_consumer", "kv_both"]);
const EXAMPLE = `--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'`;

function groupBy(probes: readonly EndpointProbe[], key: (p: EndpointProbe) => string): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const p of probes) groups.set(key(p), [...(groups.get(key(p)) ?? []), p.endpoint.key]);
  return groups;
}

function roleFindings(p: EndpointProbe, role: string): Finding[] {
  const { key } = p.endpoint;
  const findings: Finding[] = [];
  if (canPrefill(p.endpoint) && !PRODUCES.has(role))
    findings.push(
      finding(
        CHECK,
        "fail",
        `prefill ${key} has kv_role ${role}: it cannot serve prefill legs`,
        "set kv_role to kv_producer or kv_both",
      ),
    );
  if (canDecode(p.endpoint) && !CONSUMES.has(role))
    findings.push(
      finding(
        CHECK,
        "fail",
        `decode ${key} has kv_role ${role}: it cannot serve decode legs`,
        "set kv_role to kv_consumer or kv_both",
      ),
    );
  return findings;
}

/** Checks connector, roles and engine ids across the reachable endpoints. */
export function checkTransferConfig(probes: readonly EndpointProbe[]): Finding[] {
  const read = probes.filter((p) => p.metricsRead);
  if (read.length === 0) return [finding(CHECK, "skip", "no endpoint's /metrics could be read")];
  const configured = read.filter((p) => p.transfer !== undefined);
  if (configured.length === 0)
    return [
      finding(
        CHECK,
        "warn",
        `no endpoint exposes ${TRANSFER_INFO_METRIC}: connector, roles and engine ids are not verified`,
        "compare the --kv-transfer-config of prefill and decode servers by hand",
      ),
    ];
  const findings: Finding[] = read
    .filter((p) => p.transfer === undefined)
    .map((p) =>
      finding(
        CHECK,
        "fail",
        `${p.endpoint.key} has no KV transfer configuration while the others do`,
        `start it with ${EXAMPLE}`,
      ),
    );
  const connectors = groupBy(configured, (p) => p.transfer!.connector);
  if (connectors.size > 1) {
    const list = [...connectors].map(([c, keys]) => `${c} (${keys.join(", ")})`).join(", ");
    findings.push(
      finding(
        CHECK,
        "fail",
        `KV connectors disagree: ${list}`,
        "use one kv_connector on every prefill and decode server",
      ),
    );
  }
  for (const p of configured) findings.push(...roleFindings(p, p.transfer!.role));
  for (const [id, keys] of groupBy(configured, (p) => p.transfer!.engineId))
    if (keys.length > 1)
      findings.push(
        finding(
          CHECK,
          "fail",
          `engine_id ${id} is shared by ${keys.join(", ")}: a decode cannot tell their KV apart`,
          "give each server its own engine_id, or leave it out (a fresh one per start)",
        ),
      );
  const [connector] = connectors.keys();
  return orPass(
    CHECK,
    findings,
    `KV transfer configuration agrees: ${connector} on ${configured.length} servers, roles match, engine ids distinct`,
  );
}
