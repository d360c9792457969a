/** Every endpoint answers `/health` from this host; a prefill that does not cannot take P/D work. */
import { type Finding, finding, orPass } from "./findings.ts";
import type { EndpointProbe } from "./probe.ts";
import { canDecode, canPrefill } from "./roles.ts";

const roleName = (p: EndpointProbe) =>
  canPrefill(p.endpoint) ? (canDecode(p.endpoint) ? "prefill/decode" : "prefill") : "decode";

/** Unreachable endpoints fail; a router that disagrees about a reachable one warns. */
export function checkReachability(probes: readonly EndpointProbe[]): Finding[] {
  const findings: Finding[] = [];
  for (const p of probes) {
    const { key, hostPort, routerHealth } = p.endpoint;
    if (!p.health.ok) {
      const consequence = canPrefill(p.endpoint)
        ? "decode endpoints cannot hand it a prefill"
        : "requests scheduled to it fail";
      findings.push(
        finding(
          "reachability",
          "fail",
          `${roleName(p)} ${key} (${hostPort}) is unreachable from this host: ${p.health.error}; ${consequence}`,
          "check that the server runs and listens on that address and port, and that the network lets decode pods reach it",
        ),
      );
    } else if (routerHealth !== undefined && routerHealth !== "ready")
      findings.push(
        finding(
          "reachability",
          "warn",
          `${key} answers /health here but the router marks it ${routerHealth}`,
          "check the router's network path to it and its /metrics",
        ),
      );
  }
  const prefills = probes.filter((p) => canPrefill(p.endpoint));
  const timings = prefills.map((p) => `${p.endpoint.key} ${p.health.ok ? p.health.ms.toFixed(1) : "-"} ms`);
  return orPass(
    "reachability",
    findings,
    `every decode can reach a prefill: all ${probes.length} endpoints answer /health (prefill ${timings.join(", ")})`,
  );
}
