/**
 * `llmd doctor`: checks a P/D deployment from this host and reports one finding per problem:
 * role labels, that prefill and decode both exist, reachability, the KV transfer configuration,
 * the served model, then one test request through both legs with each leg's timing.
 */
import { type Finding, finding } from "./findings.ts";
import type { DoctorEndpoint } from "./inventory.ts";
import { checkModels } from "./models.ts";
import { type EndpointProbe, probeEndpoint } from "./probe.ts";
import { checkReachability } from "./reachability.ts";
import { canDecode, canPrefill, checkRoleLabels, checkStages } from "./roles.ts";
import { type LegTiming, runTestRequest } from "./test-request.ts";
import { checkTransferConfig } from "./transfer-config.ts";

/** How the doctor runs. */
export interface DoctorOptions {
  /** The model of the test request (default: the one every endpoint serves). */
  model?: string;
  /** Per HTTP call, ms. */
  timeoutMs: number;
  /** Whether to send the test request. */
  testRequest: boolean;
}

/** The doctor's verdict. */
export interface DoctorReport {
  /** False when any finding failed. */
  ok: boolean;
  endpoints: number;
  findings: Finding[];
  legs: { prefill?: LegTiming; decode?: LegTiming };
}

/** The pair for the test request: a prefill and a decode, distinct and single-role when possible. */
function testPair(probes: readonly EndpointProbe[]): [EndpointProbe, EndpointProbe] | undefined {
  const reachable = probes.filter((p) => p.health.ok);
  const prefills = reachable.filter((p) => canPrefill(p.endpoint));
  const prefill = prefills.find((p) => !canDecode(p.endpoint)) ?? prefills[0];
  const decodes = reachable.filter((p) => canDecode(p.endpoint));
  const decode =
    decodes.find((p) => p !== prefill && !canPrefill(p.endpoint)) ??
    decodes.find((p) => p !== prefill) ??
    decodes[0];
  return prefill && decode ? [prefill, decode] : undefined;
}

async function testRequest(
  probes: readonly EndpointProbe[],
  model: string | undefined,
  options: DoctorOptions,
) {
  const skipped = (why: string) => ({
    findings: [finding("test-request", "skip", `not sent: ${why}`)],
    legs: {},
  });
  if (!options.testRequest) return skipped("--no-test-request");
  const pair = testPair(probes);
  if (!pair) return skipped("no reachable prefill and decode");
  if (model === undefined) return skipped("no model served by every endpoint");
  return runTestRequest(pair[0], pair[1], model, options.timeoutMs);
}

/** Runs every check over `endpoints`. */
export async function runDoctor(
  endpoints: readonly DoctorEndpoint[],
  options: DoctorOptions,
): Promise<DoctorReport> {
  const probes = await Promise.all(endpoints.map((e) => probeEndpoint(e, options.timeoutMs)));
  const reachable = probes.filter((p) => p.health.ok);
  const models = checkModels(reachable, options.model);
  const test = await testRequest(probes, models.model, options);
  const findings = [
    ...checkRoleLabels(endpoints),
    ...checkStages(endpoints),
    ...checkReachability(probes),
    ...checkTransferConfig(reachable),
    ...models.findings,
    ...test.findings,
  ];
  return {
    ok: !findings.some((f) => f.verdict === "fail"),
    endpoints: endpoints.length,
    findings,
    legs: test.legs,
  };
}
