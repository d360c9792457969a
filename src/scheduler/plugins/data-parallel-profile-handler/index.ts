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
import { DATA_PARALLEL_HEADER } from "../../../disagg/headers.ts";
import { UPSTREAM_HEADERS_STATE_KEY } from "../../framework/data-keys.ts";
import type { PreRequest, SchedulingContext, SchedulingResult } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { chosenFor } from "../shared/chosen-endpoints.ts";
import { hostPort } from "../shared/host-port.ts";
import { SingleProfileHandler } from "../shared/single-profile.ts";
import { setStateHeader } from "../shared/state-headers.ts";

export { DATA_PARALLEL_HEADER };

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

export { hostPort };

/** Validated parameters. */
export type DataParallelParams = z.output<typeof parameters>;

/** The single-profile handler plus the picked rank's header. */
class DataParallelProfileHandler extends SingleProfileHandler implements PreRequest {
  override readonly type = "data-parallel-profile-handler";

  constructor(
    name: string,
    readonly primaryPort: number,
  ) {
    super(name);
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    const target = chosenFor(result);
    if (target) setStateHeader(ctx, UPSTREAM_HEADERS_STATE_KEY, DATA_PARALLEL_HEADER, hostPort(target));
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
