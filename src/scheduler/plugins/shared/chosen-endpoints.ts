/**
 * Helpers shared by plugins that act on a scheduling decision (not plugins themselves).
 */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { SchedulingResult } from "../../framework/types.ts";

/**
 * The endpoint each profile run actually dispatches to (its first target), one per profile,
 * without duplicates. In P/D that is the prefill and the decode endpoint.
 */
export function chosenEndpoints(result: SchedulingResult): Endpoint[] {
  const chosen: Endpoint[] = [];
  for (const run of result.profileResults.values()) {
    const first = run?.targetEndpoints[0];
    if (first && !chosen.includes(first)) chosen.push(first);
  }
  return chosen;
}

/** The first target of `profileName` (default: the primary profile), if it picked one. */
export function chosenFor(result: SchedulingResult, profileName?: string): Endpoint | undefined {
  return result.profileResults.get(profileName ?? result.primaryProfileName)?.targetEndpoints[0];
}
