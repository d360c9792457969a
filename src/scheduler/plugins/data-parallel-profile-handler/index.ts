/**
 * `data-parallel-profile-handler` (llm-d, beta, deprecated): runs the one scheduling profile and,
 * just before dispatch, tells the upstream which data-parallel rank was picked with the
 * `x-data-parallel-host-port` request header (`address:port` of the rank).
 *
 * llm-d also rewrites the destination to the pod's `primaryPort`, where a DP-aware front routes by
 * that header. llmd does not: every rank is its own endpoint (`port: "8000,8001"` in the endpoints
 * file), so the gateway connects to the picked rank's own port directly and no front is needed.
 * `primaryPort` is validated and kept for config compatibility.
 */
import { z } from "zod";
import { LlmdError } from "../../../api/errors.ts";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { UPSTREAM_HEADERS_STATE_KEY } from "../../framework/data-keys.ts";
import type {
  PluginDefinition,
  PreRequest,
  ProfileHandler,
  ProfileRunResult,
  SchedulerProfile,
  SchedulingContext,
  SchedulingResult,
} from "../../framework/types.ts";

/** Request header naming the picked rank, as llm-d sets it. */
export const DATA_PARALLEL_HEADER = "x-data-parallel-host-port";

const parameters = z
  .strictObject({
    primaryPort: z
      .number({ error: "expected a port 1-65535" })
      .int({ error: "expected a port 1-65535" })
      .min(1, { error: "expected a port 1-65535" })
      .max(65535, { error: "expected a port 1-65535" })
      .default(8000),
  })
  .prefault({});

/** Validated parameters. */
export type DataParallelParams = z.output<typeof parameters>;

/** `address:port` of an endpoint, bracketing IPv6 addresses. */
export function hostPort(endpoint: Endpoint): string {
  const { address, port } = endpoint.metadata;
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

class DataParallelProfileHandler implements ProfileHandler, PreRequest {
  readonly type = "data-parallel-profile-handler";

  constructor(
    readonly name: string,
    readonly primaryPort: number,
  ) {}

  /** One round over the first (in llm-d: the only) profile. */
  pickProfiles(
    _ctx: SchedulingContext,
    profiles: ReadonlyMap<string, SchedulerProfile>,
    results: ReadonlyMap<string, ProfileRunResult | null>,
  ): SchedulerProfile[] {
    const first = profiles.values().next();
    return results.size > 0 || first.done ? [] : [first.value];
  }

  /** The profile's result is primary; nothing picked is llm-d's 429 `rejected-saturated`. */
  processResults(
    _ctx: SchedulingContext,
    results: ReadonlyMap<string, ProfileRunResult | null>,
  ): SchedulingResult | LlmdError {
    for (const [name, result] of results)
      if (result) return { primaryProfileName: name, profileResults: new Map(results) };
    return new LlmdError("rejected_saturated", "no endpoint passed the scheduling filters", {
      status: 429,
      droppedReason: "rejected-saturated",
    });
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    const target = result.profileResults.get(result.primaryProfileName)?.targetEndpoints[0];
    if (!target) return;
    let headers = ctx.state.get(UPSTREAM_HEADERS_STATE_KEY) as Map<string, string> | undefined;
    if (!headers) ctx.state.set(UPSTREAM_HEADERS_STATE_KEY, (headers = new Map()));
    headers.set(DATA_PARALLEL_HEADER, hostPort(target));
  }
}

/** Registry entry for `data-parallel-profile-handler`. */
export const definition: PluginDefinition<DataParallelParams> = {
  type: "data-parallel-profile-handler",
  stability: "deprecated",
  description: "Runs the single profile; sets x-data-parallel-host-port to the picked rank's address:port",
  parameters,
  create: (params, env) => new DataParallelProfileHandler(env.name, params.primaryPort),
};
