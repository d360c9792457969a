/**
 * A scenario's P/D and fault settings as fleet options: replica groups → `llm-d.ai/role` labels,
 * `fleet.kvTransfer` → the transfer model, `faults` → transfer failures and replica deaths (each
 * with its own seeded random source, so adding one fault does not move the other's draws).
 */
import { LlmdError } from "../api/errors.ts";
import { ROLE_LABEL } from "../endpoints/endpoint.ts";
import { KV_LINK_NAMES, KV_LINKS, type KvLinkName, type ResolvedEngineOptions } from "../engine/index.ts";
import type { Scenario } from "../workload/scenario.ts";
import { Rng } from "../workload/rng.ts";
import type { FleetOptions } from "./simulator.ts";

/** The fleet options for the scenario's replica groups, transfers and faults. */
export function disaggregationOptions(
  scenario: Scenario,
  engine: ResolvedEngineOptions,
): Pick<FleetOptions, "labels" | "pd" | "deaths"> {
  const { groups, kvTransfer } = scenario.fleet;
  const roles = groups.flatMap((g) => Array.from({ length: g.replicas }, () => g.role));
  const name = kvTransfer.link;
  if (!(KV_LINK_NAMES as readonly string[]).includes(name))
    throw new LlmdError(
      "invalid_scenario",
      `fleet.kvTransfer.link: expected one of ${KV_LINK_NAMES.join(", ")}, got ${name}`,
    );
  const preset = KV_LINKS[name as KvLinkName];
  const transferRandom = new Rng(`transfer-faults:${scenario.seed}`);
  const deathRandom = new Rng(`replica-deaths:${scenario.seed}`);
  const everyS = scenario.faults.replicaDeathEveryS;
  return {
    ...(roles.length > 0 ? { labels: (i: number) => ({ [ROLE_LABEL]: roles[i]! }) } : {}),
    pd: {
      engine,
      link: { gbps: kvTransfer.gbps ?? preset.gbps, latencyMs: kvTransfer.latencyMs ?? preset.latencyMs },
      transferFailureRate: scenario.faults.transferFailureRate,
      abortTimeoutMs: kvTransfer.abortTimeoutS * 1000,
      random: () => transferRandom.next(),
    },
    ...(everyS ? { deaths: { everyMs: everyS * 1000, random: () => deathRandom.next() } } : {}),
  };
}
