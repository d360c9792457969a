/**
 * Scheduling one admitted request, host-neutral: producers (prepare) → profiles (schedule) → the
 * primary profile's first target → pre-request hooks. The host then dispatches to the target and
 * reports `firstToken` and exactly one `complete`.
 */
import { LlmdError } from "../api/errors.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { RequestScheduler, SchedulingContext, SchedulingResult } from "../scheduler/framework/types.ts";

/** A scheduled request: its context, decision and the endpoint to dispatch to. */
export interface Placement {
  readonly ctx: SchedulingContext;
  readonly result: SchedulingResult;
  readonly target: Endpoint;
}

const nothingPicked = () =>
  new LlmdError("no_endpoint_picked", "the scheduler picked no endpoint for this request");

/**
 * Schedules `ctx.request` over `endpoints` and runs the pre-request hooks → the placement, or the
 * error that answers the request (nothing to complete then). A promise only when a producer is
 * asynchronous; `onScheduled` gets the profile run's duration in seconds.
 */
export function placeRequest(
  scheduler: RequestScheduler,
  ctx: SchedulingContext,
  endpoints: readonly Endpoint[],
  onScheduled?: (seconds: number) => void,
): Placement | LlmdError | Promise<Placement | LlmdError> {
  const pending = scheduler.prepare(ctx, endpoints);
  if (pending) return pending.then(() => decide(scheduler, ctx, endpoints, onScheduled));
  return decide(scheduler, ctx, endpoints, onScheduled);
}

function decide(
  scheduler: RequestScheduler,
  ctx: SchedulingContext,
  endpoints: readonly Endpoint[],
  onScheduled: ((seconds: number) => void) | undefined,
): Placement | LlmdError {
  const started = onScheduled ? performance.now() : 0;
  const result = scheduler.schedule(ctx, endpoints);
  onScheduled?.((performance.now() - started) / 1000);
  if (result instanceof LlmdError) return result;
  const target = result.profileResults.get(result.primaryProfileName)?.targetEndpoints[0];
  if (!target) return nothingPicked();
  scheduler.preRequest(ctx, result);
  return { ctx, result, target };
}
