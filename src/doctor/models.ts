/** Prefill and decode serve the same model (a decode can only use KV computed for its model). */
import { type Finding, finding, orPass } from "./findings.ts";
import type { EndpointProbe } from "./probe.ts";

const CHECK = "models";

/** The model every reachable endpoint serves (`wanted` when given), and the findings. */
export function checkModels(
  probes: readonly EndpointProbe[],
  wanted: string | undefined,
): { findings: Finding[]; model: string | undefined } {
  const findings: Finding[] = [];
  const listed = probes.filter((p) => p.models !== undefined);
  if (listed.length === 0)
    return { findings: [finding(CHECK, "skip", "no endpoint listed its models")], model: undefined };
  for (const p of probes)
    if (p.models === undefined)
      findings.push(
        finding(
          CHECK,
          "warn",
          `${p.endpoint.key}: /v1/models could not be read`,
          "check that it is an OpenAI-compatible server",
        ),
      );
  const common = listed.reduce((kept, p) => kept.filter((m) => p.models!.includes(m)), listed[0]!.models!);
  const model = wanted ?? common[0];
  const describe = (p: EndpointProbe) => `${p.endpoint.key} [${p.models!.join(", ")}]`;
  if (wanted !== undefined) {
    for (const p of listed)
      if (!p.models!.includes(wanted))
        findings.push(
          finding(
            CHECK,
            "fail",
            `${describe(p)} does not serve ${wanted}`,
            `serve ${wanted} there or pick another --model`,
          ),
        );
  } else if (model === undefined)
    findings.push(
      finding(
        CHECK,
        "fail",
        `prefill and decode serve no common model: ${listed.map(describe).join(", ")}`,
        "serve the same model (and --served-model-name) on every prefill and decode server",
      ),
    );
  const ok = model !== undefined && !findings.some((f) => f.verdict === "fail");
  return {
    findings: orPass(CHECK, findings, `every endpoint serves ${model}`),
    model: ok ? model : undefined,
  };
}
