/**
 * Plugin timings without timing every call: a clock read costs 50–150 ns and the default config
 * makes ~16 plugin calls per request, so timing all of them costs microseconds per request. The
 * sampled scheduler sends every `every`-th call of each phase through the timed plugin proxies
 * (the same plugin instances, so state is shared) and the rest straight to the plugins; observers
 * weight each sample by `every`, so histogram counts and sums stay unbiased estimates.
 */
import type { LlmdError } from "../api/errors.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type {
  RequestScheduler,
  ResponseUsage,
  SchedulingContext,
  SchedulingResult,
  TerminationCause,
} from "../scheduler/framework/types.ts";

/** Phases of the host contract, each with its own sampling counter. */
const HEADERS = 0;
const PREPARE = 1;
const SCHEDULE = 2;
const PRE_REQUEST = 3;
const FIRST_TOKEN = 4;
const COMPLETE = 5;

/** Routes 1 in `every` calls of each phase to `timed`, the others to `plain` (first call timed). */
export class SampledScheduler implements RequestScheduler {
  private readonly calls = new Uint32Array(6);

  constructor(
    private readonly plain: RequestScheduler,
    private readonly timed: RequestScheduler,
    private readonly every: number,
  ) {}

  private pick(phase: number): RequestScheduler {
    const n = this.calls[phase]!;
    this.calls[phase] = n + 1 === this.every ? 0 : n + 1;
    return n === 0 ? this.timed : this.plain;
  }

  processRequestHeaders(ctx: SchedulingContext): void {
    this.pick(HEADERS).processRequestHeaders(ctx);
  }

  prepare(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void | Promise<void> {
    return this.pick(PREPARE).prepare(ctx, endpoints);
  }

  schedule(ctx: SchedulingContext, endpoints: readonly Endpoint[]): SchedulingResult | LlmdError {
    return this.pick(SCHEDULE).schedule(ctx, endpoints);
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    this.pick(PRE_REQUEST).preRequest(ctx, result);
  }

  firstToken(ctx: SchedulingContext, endpoint: Endpoint): void {
    this.pick(FIRST_TOKEN).firstToken(ctx, endpoint);
  }

  complete(ctx: SchedulingContext, endpoint: Endpoint, cause: TerminationCause, usage?: ResponseUsage): void {
    this.pick(COMPLETE).complete(ctx, endpoint, cause, usage);
  }
}
