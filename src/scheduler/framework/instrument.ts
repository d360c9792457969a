/**
 * Telemetry as a wrapper around the pure core: `instrumentScheduler` returns a RequestScheduler
 * whose plugins are timing proxies reporting to an observer. The gateway maps the observations to
 * `llm_d_epp_plugin_duration_seconds{extension_point,plugin_type,plugin_name}` and
 * `llm_d_epp_scheduler_e2e_duration_seconds`; the uninstrumented Scheduler pays nothing.
 */
import type { LlmdError } from "../../api/errors.ts";
import type { Endpoint } from "../../endpoints/endpoint.ts";
import { Scheduler, type SchedulerParts } from "./scheduler.ts";
import type {
  RequestScheduler,
  ResponseUsage,
  SchedulerProfile,
  SchedulingContext,
  SchedulingResult,
  TerminationCause,
} from "./types.ts";
import type { Plugin } from "../../plugin/types.ts";

/** llm-d's `extension_point` label values, keyed by the plugin method they time. */
export const EXTENSION_POINTS = {
  processRequestHeaders: "RequestHeader",
  produce: "DataProducer",
  screen: "Screener",
  pickProfiles: "ProfilePicker",
  filter: "Filter",
  score: "Scorer",
  pick: "Picker",
  processResults: "ProcessProfilesResults",
  preRequest: "PreRequest",
  onFirstToken: "ResponseStreaming",
  onResponseComplete: "ResponseComplete",
} as const;

/** Receives durations in seconds (wall time, even when the scheduler runs on a virtual clock). */
export interface SchedulerObserver {
  /** Called after every timed plugin call (unless `pluginTimer` is given). */
  pluginDuration?(extensionPoint: string, plugin: Plugin, seconds: number): void;
  /**
   * Resolves, once per (extension point, plugin) at wrap time, the sink its durations go to;
   * lets a host pre-resolve metric label sets instead of looking them up on every call.
   */
  pluginTimer?(extensionPoint: string, plugin: Plugin): (seconds: number) => void;
  /** One `schedule` call; `ok` is false when it returned an error value. */
  schedulerDuration(seconds: number, ok: boolean): void;
}

type AnyMethod = (a?: unknown, b?: unknown, c?: unknown, d?: unknown) => unknown;

function durationSink(observer: SchedulerObserver, point: string, plugin: Plugin): (seconds: number) => void {
  if (observer.pluginTimer) return observer.pluginTimer(point, plugin);
  return (seconds) => observer.pluginDuration?.(point, plugin, seconds);
}

/** `fn` timed into `sink`; extension-point methods take at most four arguments. */
function timedMethod(plugin: Plugin, fn: AnyMethod, sink: (seconds: number) => void): AnyMethod {
  return (a, b, c, d) => {
    const start = performance.now();
    const out = fn.call(plugin, a, b, c, d);
    if (out instanceof Promise) return out.finally(() => sink((performance.now() - start) / 1000));
    sink((performance.now() - start) / 1000);
    return out;
  };
}

/** A proxy of `plugin` (same type, name, category) whose extension-point methods are timed. */
function timedPlugin<T extends Plugin>(plugin: T, observer: SchedulerObserver): T {
  const proxy = Object.create(plugin) as Record<string, unknown>;
  for (const [method, point] of Object.entries(EXTENSION_POINTS)) {
    const fn = (plugin as unknown as Record<string, unknown>)[method];
    if (typeof fn !== "function") continue;
    proxy[method] = timedMethod(plugin, fn as AnyMethod, durationSink(observer, point, plugin));
  }
  return proxy as unknown as T;
}

/** Same parts with every plugin replaced by one shared timing proxy. */
export function instrumentParts(parts: SchedulerParts, observer: SchedulerObserver): SchedulerParts {
  const proxies = new Map<Plugin, Plugin>();
  const wrap = <T extends Plugin>(p: T): T => {
    let proxy = proxies.get(p);
    if (!proxy) proxies.set(p, (proxy = timedPlugin(p, observer)));
    return proxy as T;
  };
  const profiles = new Map<string, SchedulerProfile>();
  for (const [name, profile] of parts.profiles) {
    profiles.set(name, {
      name,
      filters: profile.filters.map(wrap),
      scorers: profile.scorers.map(({ scorer, weight }) => ({ scorer: wrap(scorer), weight })),
      picker: wrap(profile.picker),
    });
  }
  return {
    profileHandler: wrap(parts.profileHandler),
    profiles,
    headerProcessors: parts.headerProcessors.map(wrap),
    screeners: parts.screeners.map(wrap),
    producers: parts.producers.map(wrap),
    preRequests: parts.preRequests.map(wrap),
    responseHooks: parts.responseHooks.map(wrap),
  };
}

/** Wraps a RequestScheduler to report the end-to-end duration of each `schedule` call. */
export class TimedScheduler implements RequestScheduler {
  constructor(
    private readonly inner: RequestScheduler,
    private readonly observer: SchedulerObserver,
  ) {}

  processRequestHeaders(ctx: SchedulingContext): void {
    this.inner.processRequestHeaders(ctx);
  }

  prepare(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void | Promise<void> {
    return this.inner.prepare(ctx, endpoints);
  }

  schedule(ctx: SchedulingContext, endpoints: readonly Endpoint[]): SchedulingResult | LlmdError {
    const start = performance.now();
    const result = this.inner.schedule(ctx, endpoints);
    this.observer.schedulerDuration((performance.now() - start) / 1000, !(result instanceof Error));
    return result;
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    this.inner.preRequest(ctx, result);
  }

  firstToken(ctx: SchedulingContext, endpoint: Endpoint): void {
    this.inner.firstToken(ctx, endpoint);
  }

  complete(ctx: SchedulingContext, endpoint: Endpoint, cause: TerminationCause, usage?: ResponseUsage): void {
    this.inner.complete(ctx, endpoint, cause, usage);
  }
}

/** A scheduler over the same plugin instances (same state) that reports timings to `observer`. */
export function instrumentScheduler(scheduler: Scheduler, observer: SchedulerObserver): RequestScheduler {
  return new TimedScheduler(new Scheduler(instrumentParts(scheduler.parts, observer)), observer);
}
