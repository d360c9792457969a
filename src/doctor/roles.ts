/**
 * The roles checks: every endpoint's `llm-d.ai/role` is one the role filters accept, and the
 * fleet has somewhere to prefill and somewhere to decode.
 */
import { DECODE_ROLES, ENCODE_ROLES, PREFILL_ROLES, ROLE_LABEL } from "../endpoints/endpoint.ts";
import { type Finding, finding, orPass } from "./findings.ts";
import type { DoctorEndpoint } from "./inventory.ts";

const VALID_ROLES: ReadonlySet<string> = new Set([...PREFILL_ROLES, ...DECODE_ROLES, ...ENCODE_ROLES]);

/** True when prefill-filter keeps the endpoint. */
export const canPrefill = (e: DoctorEndpoint): boolean => PREFILL_ROLES.includes(e.labels[ROLE_LABEL] ?? "");

/** True when decode-filter keeps the endpoint (unlabeled endpoints decode). */
export function canDecode(e: DoctorEndpoint): boolean {
  const role = e.labels[ROLE_LABEL];
  return role === undefined || DECODE_ROLES.includes(role);
}

/** Each endpoint's role label: invalid values fail, a missing label warns. */
export function checkRoleLabels(endpoints: readonly DoctorEndpoint[]): Finding[] {
  const findings: Finding[] = [];
  for (const e of endpoints) {
    const role = e.labels[ROLE_LABEL];
    if (role === undefined)
      findings.push(
        finding(
          "roles",
          "warn",
          `${e.key} has no ${ROLE_LABEL} label: decode-filter treats it as decode, prefill-filter never picks it`,
          `label it ${ROLE_LABEL}: decode (or prefill)`,
        ),
      );
    else if (!VALID_ROLES.has(role))
      findings.push(
        finding(
          "roles",
          "fail",
          `${e.key} has ${ROLE_LABEL}="${role}", which no role filter accepts: no profile will pick it`,
          `set ${ROLE_LABEL} to one of ${[...VALID_ROLES].join(", ")}`,
        ),
      );
  }
  const prefill = endpoints.filter(canPrefill).length;
  const decode = endpoints.filter(canDecode).length;
  return orPass(
    "roles",
    findings,
    `every endpoint has a valid ${ROLE_LABEL} (${prefill} prefill, ${decode} decode)`,
  );
}

/** At least one prefill-capable and one decode-capable endpoint. */
export function checkStages(endpoints: readonly DoctorEndpoint[]): Finding[] {
  const findings: Finding[] = [];
  const prefill = endpoints.filter(canPrefill).length;
  const decode = endpoints.filter(canDecode).length;
  if (prefill === 0)
    findings.push(
      finding(
        "stages",
        "fail",
        "no endpoint can prefill: P/D requests will fail in the prefill profile",
        `label at least one model server ${ROLE_LABEL}: prefill`,
      ),
    );
  if (decode === 0)
    findings.push(
      finding(
        "stages",
        "fail",
        "no endpoint can decode: every request fails in the decode profile",
        `label at least one model server ${ROLE_LABEL}: decode`,
      ),
    );
  return orPass("stages", findings, `${prefill} prefill and ${decode} decode endpoints`);
}
