/**
 * The gateway's HTTP front door on raw node:http: OpenAI inference paths are scheduled and
 * proxied; `/v1/models`, `/health`, `/ready`, `/metrics` and `/debug/endpoints` are answered
 * locally. `drain()` is the graceful shutdown (drain.ts), `close()` the immediate one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Gauge } from "prom-client";
import { LlmdError } from "../api/errors.ts";
import { wallClock } from "../core/clock.ts";
import { stderrLog } from "../core/log.ts";
import { instrumentParts } from "../scheduler/framework/instrument.ts";
import { Scheduler } from "../scheduler/framework/scheduler.ts";
import type { RequestScheduler } from "../scheduler/framework/types.ts";
import { RequestLifecycle } from "../lifecycle/lifecycle.ts";
import { createGatewayAdmission } from "./admission.ts";
import {
  BodyBudget,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HEADER_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_INFLIGHT_BODY_BYTES,
} from "../api/request-body.ts";
import { BodyBuffers } from "../api/body-buffers.ts";
import { answerEdgeErrors, edgeServerOptions } from "../api/http-edge.ts";
import { debugEndpoints } from "./debug-endpoints.ts";
import { type DrainOutcome, GatewayDrain, shuttingDown } from "./drain.ts";
import { handleInference, type InferenceDeps } from "./inference.ts";
import { InflightTracker } from "./inflight.ts";
import { DEFAULT_PD_OPTIONS } from "./pd-dispatch.ts";
import { ResponsesService, routeResponses } from "./responses-service.ts";
import { GatewayMetrics } from "./metrics.ts";
import { INFERENCE_PATHS } from "./parse-request.ts";
import { sendError, sendJson } from "./respond.ts";
import { streamFlusherFor } from "./stream-flusher.ts";
import type { GatewayOptions, GatewayPool } from "./types.ts";
import { Upstreams } from "./upstreams.ts";
import { SampledScheduler } from "./sampled-scheduler.ts";
import { DEFAULT_ID_PROMPT_BYTES, HeldIdPrompts } from "../tokenizer/id-prompts.ts";

/** A running gateway. */
export interface Gateway {
  /** `http://host:port` */
  url: string;
  port: number;
  metrics: GatewayMetrics;
  /** The router's own in-flight count per endpoint. */
  inflight: InflightTracker;
  /**
   * Graceful shutdown: `/ready` turns 503, new inference requests and queued ones get 503
   * `rejected-shutting-down`, accepted requests and streams run to their end for up to `timeoutMs`
   * (the rest are answered `shutting_down`), then the gateway closes. Idempotent.
   */
  drain(timeoutMs: number): Promise<DrainOutcome>;
  /** True once `drain` was called. */
  readonly draining: boolean;
  /** Drops queued requests (503), stops accepting, aborts in-flight upstream requests, closes sockets. */
  close(): Promise<void>;
}

/** Plugin timings are taken on 1 in this many calls of each phase (see sampled-scheduler.ts). */
const PLUGIN_TIMING_SAMPLE_EVERY = 8;

/**
 * Reports plugin timings of a framework `Scheduler` into the gateway metrics, sampled and weighted,
 * each plugin's series resolved once. The end-to-end scheduling time is measured by the request
 * flow on every request (any scheduler).
 */
function instrumented(scheduler: RequestScheduler, metrics: GatewayMetrics): RequestScheduler {
  if (!(scheduler instanceof Scheduler)) return scheduler;
  const timed = instrumentParts(scheduler.parts, {
    pluginTimer: (point, plugin) => {
      const series = metrics.pluginTimer(point, plugin.type, plugin.name);
      return (seconds) => series.observe(seconds, PLUGIN_TIMING_SAMPLE_EVERY);
    },
    schedulerDuration: () => {},
  });
  return new SampledScheduler(scheduler, new Scheduler(timed), PLUGIN_TIMING_SAMPLE_EVERY);
}

function modelList(pool: GatewayPool): unknown {
  const data = pool.models().map((id) => ({ id, object: "model", created: 0, owned_by: "llmd", root: id }));
  return { object: "list", data };
}

const notFound = (path: string) => new LlmdError("not_found", `no route for ${path}`);
const methodNotAllowed = (method: string, path: string) =>
  new LlmdError("method_not_allowed", `${method} is not allowed on ${path}`);

type LocalHandler = (deps: InferenceDeps, res: ServerResponse) => void;

const LOCAL_ROUTES: ReadonlyMap<string, LocalHandler> = new Map<string, LocalHandler>([
  ["/health", (_deps, res) => sendJson(res, 200, { status: "ok" })],
  [
    "/ready",
    (deps, res) => {
      const ready = deps.pool.candidates().length;
      if (deps.drain.isDraining) sendJson(res, 503, { ready, status: "shutting down" });
      else
        sendJson(res, ready > 0 ? 200 : 503, { ready, status: ready > 0 ? "ready" : "no ready endpoints" });
    },
  ],
  ["/v1/models", (deps, res) => sendJson(res, 200, modelList(deps.pool))],
  ["/debug/endpoints", (deps, res) => sendJson(res, 200, debugEndpoints(deps.pool))],
  [
    "/metrics",
    (deps, res) => {
      void deps.metrics.registry.metrics().then((text) => {
        res.writeHead(200, { "content-type": deps.metrics.registry.contentType });
        res.end(text);
      });
    },
  ],
]);

function route(
  deps: InferenceDeps,
  responses: ResponsesService | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  const method = req.method ?? "";
  if (path.startsWith("/v1/responses")) {
    const parsed = new URL(url, "http://router");
    if (routeResponses(responses, deps, method, parsed, req, res)) return;
  }
  if (INFERENCE_PATHS.has(path)) {
    if (method === "POST") void handleInference(deps, path, req, res);
    else sendError(res, methodNotAllowed(method, path));
    return;
  }
  const local = LOCAL_ROUTES.get(path);
  if (!local) sendError(res, notFound(path));
  else if (method !== "GET" && method !== "HEAD") sendError(res, methodNotAllowed(method, path));
  else local(deps, res);
}

/**
 * Every request is counted until its response closes. While draining, connections are not kept
 * alive and every POST (the inference routes) is answered 503 `rejected-shutting-down`, so a
 * load balancer retries it on another replica.
 */
function serve(deps: InferenceDeps, handle: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    deps.drain.track(res);
    if (deps.drain.isDraining) {
      res.shouldKeepAlive = false;
      if (req.method === "POST") {
        sendError(res, shuttingDown());
        return;
      }
    }
    handle(req, res);
  };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Starts the gateway; resolves once it listens. The caller owns the pool's start/stop. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const inflight = new InflightTracker();
  const metrics = new GatewayMetrics(options.pool, inflight, options.poolName);
  const upstreams = new Upstreams(options.upstream);
  const clock = options.clock ?? wallClock;
  const pool = options.pool;
  const lifecycle = new RequestLifecycle({
    scheduler: instrumented(options.scheduler, metrics),
    objectives: options.objectives ?? new Map(),
    ...(options.admission?.tenants ? { tenants: options.admission.tenants } : {}),
    flowControlGate: options.admission?.flowControlGate ?? false,
    flowControl: options.admission?.flowControl,
    plugins: options.admission?.plugins ?? new Map(),
    clock,
    endpoints: () => pool.candidates(),
    registry: metrics.registry,
    ...(options.poolName ? { poolName: options.poolName } : {}),
    onScheduled: (seconds) => metrics.scheduled(seconds),
  });
  const admission = createGatewayAdmission(lifecycle, pool, clock, options.admission?.pollIntervalMs);
  const deps: InferenceDeps = {
    lifecycle,
    pool,
    upstreams,
    metrics,
    inflight,
    admission,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    // Every use of a body (retries, hooks, its upstream write, done or its connection destroyed)
    // ends before its lease is released, or holds the lease (SchedulingRequest.bodyHolder), so
    // large bodies are read into reused buffers.
    bodies: new BodyBudget(
      options.maxInflightBodyBytes ?? DEFAULT_MAX_INFLIGHT_BODY_BYTES,
      new BodyBuffers(),
    ),
    idPrompts: new HeldIdPrompts(options.idPromptBytes ?? DEFAULT_ID_PROMPT_BYTES),
    maxAttempts: options.maxAttempts ?? 3,
    log: options.log ?? stderrLog("gateway"),
    flusher: streamFlusherFor(options.streamFlushMs),
    drain: new GatewayDrain(),
    pd: options.pd ?? DEFAULT_PD_OPTIONS,
  };
  new Gauge({
    name: "llmd_token_id_prompt_cache_bytes",
    help: "Bytes of token-id prompts the router holds for the prompts that continue them",
    registers: [metrics.registry],
    collect() {
      this.set(deps.idPrompts.bytes);
    },
  });
  const responses = options.responses && new ResponsesService(options.responses, options.admission?.tenants);
  const headerTimeoutMs = options.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
  const server = createServer(
    edgeServerOptions(headerTimeoutMs),
    serve(deps, (req, res) => route(deps, responses, req, res)),
  );
  answerEdgeErrors(server, headerTimeoutMs);
  const host = options.host ?? "127.0.0.1";
  const port = await listen(server, options.port ?? 8080, host);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Queued requests are answered 503 rejected-shutting-down before their sockets close.
      admission.shutdown();
      await new Promise((resolve) => setImmediate(resolve));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await upstreams.close();
      await closed;
    })();
    return closing;
  };
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    metrics,
    inflight,
    get draining() {
      return deps.drain.isDraining;
    },
    drain: async (timeoutMs) => {
      const outcome = await deps.drain.drain(timeoutMs, () => admission.shutdown());
      await close();
      return outcome;
    },
    close,
  };
}
