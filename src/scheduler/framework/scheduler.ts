/**
 * The scheduler its hosts drive (gateway, fleet simulator): a composition of configured plugins
 * bound to llm-d's extension points. Pure over the context and endpoints; no telemetry inside
 * (see instrument.ts for the timing wrapper).
 */
import type { LlmdError } from "../../api/errors.ts";
import type { Endpoint } from "../../endpoints/endpoint.ts";
import { runProfile } from "./profile-runner.ts";
import type {
  DataProducer,
  PreRequest,
  ProfileHandler,
  ProfileRunResult,
  RequestHeaderProcessor,
  RequestScheduler,
  ResponseHooks,
  ResponseUsage,
  SchedulerProfile,
  SchedulingContext,
  Screener,
  SchedulingResult,
  TerminationCause,
} from "./types.ts";

/** The plugins of a scheduler, grouped by extension point, in execution order. */
export interface SchedulerParts {
  readonly profileHandler: ProfileHandler;
  readonly profiles: ReadonlyMap<string, SchedulerProfile>;
  readonly headerProcessors: readonly RequestHeaderProcessor[];
  /** Narrow the request's candidates, in order, before the first profile runs. */
  readonly screeners: readonly Screener[];
  /** In dependency order (a producer runs after the producers of the keys it consumes). */
  readonly producers: readonly DataProducer[];
  readonly preRequests: readonly PreRequest[];
  readonly responseHooks: readonly ResponseHooks[];
}

/** Implements the host contract over a fixed set of plugin instances. */
export class Scheduler implements RequestScheduler {
  constructor(readonly parts: SchedulerParts) {}

  processRequestHeaders(ctx: SchedulingContext): void {
    for (const processor of this.parts.headerProcessors) processor.processRequestHeaders(ctx);
  }

  prepare(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void | Promise<void> {
    return this.produceFrom(0, ctx, endpoints);
  }

  /** Runs producers from index `start`; awaits only when one returns a promise. */
  private produceFrom(
    start: number,
    ctx: SchedulingContext,
    endpoints: readonly Endpoint[],
  ): void | Promise<void> {
    const producers = this.parts.producers;
    for (let i = start; i < producers.length; i++) {
      const pending = producers[i]!.produce(ctx, endpoints);
      if (pending) return pending.then(() => this.produceFrom(i + 1, ctx, endpoints));
    }
  }

  schedule(ctx: SchedulingContext, candidates: readonly Endpoint[]): SchedulingResult | LlmdError {
    const { profileHandler, profiles, screeners } = this.parts;
    let endpoints = candidates;
    for (const screener of screeners) endpoints = screener.screen(ctx, endpoints);
    const results = new Map<string, ProfileRunResult | null>();
    // A handler that keeps naming profiles already run would loop forever: cap the rounds.
    for (let round = 0; round <= profiles.size; round++) {
      let ran = false;
      for (const profile of profileHandler.pickProfiles(ctx, profiles, results)) {
        if (results.has(profile.name)) continue;
        results.set(profile.name, runProfile(ctx, profile, endpoints));
        ran = true;
      }
      if (!ran) break;
    }
    return profileHandler.processResults(ctx, results);
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    for (const plugin of this.parts.preRequests) plugin.preRequest(ctx, result);
  }

  firstToken(ctx: SchedulingContext, endpoint: Endpoint): void {
    for (const plugin of this.parts.responseHooks) plugin.onFirstToken?.(ctx, endpoint);
  }

  complete(
    ctx: SchedulingContext,
    endpoint: Endpoint,
    cause: TerminationCause,
    usage: ResponseUsage | undefined,
  ): void {
    for (const plugin of this.parts.responseHooks) plugin.onResponseComplete?.(ctx, endpoint, cause, usage);
  }
}
