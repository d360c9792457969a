/**
 * `llmd sidecar`: llm-d's routing sidecar in front of a decode model server (reference §5.2).
 * A POST to an inference path that names a prefill endpoint in `x-prefiller-host-port` runs as two
 * legs (src/disagg): the prefill leg on that endpoint, the decode leg on the local model server;
 * every other request, and a POST naming no prefill endpoint, is proxied to the local server as it
 * is. `GET /health` is answered here. With `dataParallelSize` N it listens on `port … port+N-1`,
 * rank i proxying to `modelServerPort + i`.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pipeline } from "node:stream/promises";
import type { Dispatcher } from "undici";
import { LlmdError } from "../api/errors.ts";
import { answerEdgeErrors, edgeServerOptions } from "../api/http-edge.ts";
import {
  BodyBudget,
  closesConnection,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HEADER_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_INFLIGHT_BODY_BYTES,
  readBody,
} from "../api/request-body.ts";
import { PREFILLER_HEADER } from "../disagg/headers.ts";
import { type JsonBody, TWO_LEG_PATHS } from "../disagg/legs.ts";
import type { PrefillRetry } from "../disagg/prefill-leg.ts";
import { type DrainOutcome, GatewayDrain, shuttingDown } from "./drain.ts";
import { clientResponseHeaders, upstreamRequestHeaders } from "./headers.ts";
import { flattenHeaders } from "./parse-request.ts";
import { sendError, sendJson } from "./respond.ts";
import { forwardTwoLegs, prefillUnreachable } from "./two-leg-forward.ts";
import { Upstreams } from "./upstreams.ts";

/** Where a prefill leg may go (`--enable-ssrf-protection`): `host:port` of the allowed pool. */
export interface PrefillAllowList {
  allows(hostPort: string): boolean;
}

/** What `startSidecar` runs. */
export interface SidecarOptions {
  /** First listening port (0 = any free port, only with one rank). */
  port: number;
  host?: string;
  /** The local model server's first port on 127.0.0.1 (llm-d's `--model-server-port`, default 8200). */
  modelServerPort: number;
  /** Ranks (default 1): rank i listens on `port + i` and proxies to `modelServerPort + i`. */
  dataParallelSize?: number;
  retry: PrefillRetry;
  /** Pick a random entry of a comma-separated `x-prefiller-host-port` (default: the first). */
  prefillerSampling?: boolean;
  /** Absent: any prefill target is accepted (llm-d's default). */
  allowList?: PrefillAllowList;
}

/** A running sidecar. */
export interface Sidecar {
  /** One URL per rank. */
  urls: string[];
  /** Graceful drain (new POSTs 503 `rejected-shutting-down`, accepted ones finish), then close. */
  drain(timeoutMs: number): Promise<DrainOutcome>;
  close(): Promise<void>;
}

/** State shared by every rank. */
interface SidecarDeps {
  options: SidecarOptions;
  upstreams: Upstreams;
  drain: GatewayDrain;
  bodies: BodyBudget;
}

/** One rank: its local model server. */
interface Rank {
  origin: string;
  local: Dispatcher;
}

/** The prefill endpoint a `x-prefiller-host-port` value names, or the 400 answering a bad one. */
export function choosePrefiller(value: string, sampling: boolean, random: () => number): string | LlmdError {
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const chosen = sampling ? entries[Math.floor(random() * entries.length)] : entries[0];
  if (chosen !== undefined && isHostPort(chosen)) return chosen;
  return new LlmdError(
    "invalid_request",
    `${PREFILLER_HEADER}: expected host:port, got ${JSON.stringify(value)}`,
  );
}

function isHostPort(value: string): boolean {
  try {
    const url = new URL(`http://${value}`);
    return url.port !== "" && url.host === value.toLowerCase() && url.pathname === "/";
  } catch {
    return false;
  }
}

/** Starts one server per rank; resolves once all listen. */
export async function startSidecar(options: SidecarOptions): Promise<Sidecar> {
  const deps: SidecarDeps = {
    options,
    upstreams: new Upstreams(),
    drain: new GatewayDrain(),
    bodies: new BodyBudget(DEFAULT_MAX_INFLIGHT_BODY_BYTES),
  };
  const host = options.host ?? "127.0.0.1";
  const servers: Server[] = [];
  const urls: string[] = [];
  try {
    for (let rank = 0; rank < (options.dataParallelSize ?? 1); rank++) {
      const origin = `http://127.0.0.1:${options.modelServerPort + rank}`;
      const server = rankServer(deps, { origin, local: deps.upstreams.forOrigin(origin) });
      servers.push(server);
      const port = await listen(server, options.port === 0 ? 0 : options.port + rank, host);
      urls.push(`http://${host.includes(":") ? `[${host}]` : host}:${port}`);
    }
  } catch (err) {
    await closeAll(servers, deps.upstreams);
    throw err;
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= closeAll(servers, deps.upstreams);
    return closing;
  };
  return {
    urls,
    close,
    drain: async (timeoutMs) => {
      const outcome = await deps.drain.drain(timeoutMs, () => {});
      await close();
      return outcome;
    },
  };
}

async function closeAll(servers: readonly Server[], upstreams: Upstreams): Promise<void> {
  const closed = servers
    .filter((s) => s.listening)
    .map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
  for (const s of servers) s.closeAllConnections();
  await upstreams.close();
  await Promise.all(closed);
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

function rankServer(deps: SidecarDeps, rank: Rank): Server {
  const server = createServer(edgeServerOptions(DEFAULT_HEADER_TIMEOUT_MS), (req, res) => {
    deps.drain.track(res);
    if (deps.drain.isDraining) {
      res.shouldKeepAlive = false;
      if (req.method === "POST") return sendError(res, shuttingDown());
    }
    void route(deps, rank, req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, err);
      else res.destroy();
    });
  });
  answerEdgeErrors(server, DEFAULT_HEADER_TIMEOUT_MS);
  return server;
}

async function route(deps: SidecarDeps, rank: Rank, req: IncomingMessage, res: ServerResponse) {
  const path = (req.url ?? "/").split("?")[0] as string;
  if (path === "/health" && req.method === "GET") return sendJson(res, 200, { status: "ok" });
  // The body counts against the held-bodies budget until its request is answered.
  const lease = deps.bodies.lease();
  try {
    const limits = { limitBytes: DEFAULT_MAX_BODY_BYTES, timeoutMs: DEFAULT_BODY_TIMEOUT_MS, lease };
    const raw = await readBody(req, limits);
    if (raw instanceof LlmdError)
      return sendError(res, raw, closesConnection(raw) ? { connection: "close" } : {});
    const prefiller = req.headers[PREFILLER_HEADER];
    if (req.method === "POST" && TWO_LEG_PATHS.has(path) && typeof prefiller === "string")
      return await twoLegs(deps, rank, path, prefiller, req, raw, res);
    return await passThrough(rank, req, raw, res);
  } finally {
    lease.release();
  }
}

async function twoLegs(
  deps: SidecarDeps,
  rank: Rank,
  path: string,
  prefillerHeader: string,
  req: IncomingMessage,
  raw: Buffer,
  res: ServerResponse,
): Promise<void> {
  const { options } = deps;
  const target = choosePrefiller(prefillerHeader, options.prefillerSampling === true, Math.random);
  if (target instanceof LlmdError) return sendError(res, target);
  if (options.allowList && !options.allowList.allows(target))
    return sendError(
      res,
      new LlmdError("prefill_forbidden", `prefill endpoint ${target} is not in the pool`),
    );
  const body = parseObject(raw);
  if (!body) return sendError(res, new LlmdError("invalid_json", "the body is not a JSON object"));
  // The P/D headers are the scheduler's: none goes on to the model servers.
  const client = flattenHeaders(req.headers);
  const requestId = client["x-request-id"] || randomUUID();
  const outcome = await forwardTwoLegs(
    {
      path,
      body,
      headers: upstreamRequestHeaders(client, requestId, raw.length),
      prefillHostPort: target,
      prefill: deps.upstreams.forOrigin(`http://${target}`),
      decode: rank.local,
      retry: options.retry,
      requestId,
      endpointKey: rank.origin,
      onFirstByte: () => {},
      signal: deps.drain.signal,
    },
    res,
  );
  if (outcome.kind === "prefill-unreachable") sendError(res, prefillUnreachable(target, outcome.message));
  else if (outcome.kind === "unreachable") sendError(res, localServerFailed(rank, outcome.error));
}

/** The 502 for a local model server that could not be reached. */
function localServerFailed(rank: Rank, error: Error): LlmdError {
  return new LlmdError("upstream_failed", `the model server at ${rank.origin} failed: ${error.message}`);
}

/** Any other request, to the local model server and back as it is. */
async function passThrough(rank: Rank, req: IncomingMessage, body: Buffer, res: ServerResponse) {
  const id = req.headers["x-request-id"];
  const requestId = typeof id === "string" && id !== "" ? id : randomUUID();
  const method = (req.method ?? "GET") as Dispatcher.HttpMethod;
  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await rank.local.request({
      path: req.url ?? "/",
      method,
      headers: upstreamRequestHeaders(flattenHeaders(req.headers), requestId, body.length),
      body: body.length > 0 ? body : null,
    });
  } catch (err) {
    return sendError(res, localServerFailed(rank, err as Error));
  }
  res.writeHead(upstream.statusCode, clientResponseHeaders(upstream.headers, rank.origin, requestId));
  await pipeline(upstream.body, res).catch(() => res.destroy());
}

function parseObject(raw: Buffer): JsonBody | undefined {
  try {
    const value: unknown = JSON.parse(raw.toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as JsonBody)
      : undefined;
  } catch {
    return undefined;
  }
}
