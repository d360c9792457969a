/**
 * The vLLM-compatible simulator server: raw node:http around one engine. Routes the OpenAI endpoints
 * (completions, chat completions, stateless responses), `/tokenize`, `/health`, `/metrics` and
 * `/reset_prefix_cache`; wrong paths get 404, wrong methods (CONNECT too) 405, and any unexpected
 * failure a 500 OpenAI error (never a crash). Its edge is the router's: header and body timeouts
 * (408), malformed HTTP (400, 431) and a bound on the bodies held at once (429). With
 * `--kv-events-config` enabled, the engine's KV events are published over ZeroMQ as vLLM publishes
 * them (src/sim/kv-publisher.ts). With `--kv-transfer-config`, it serves both P/D legs and opens
 * the KV side channel (src/sim/kv-transfer.ts). With `--dcgm-port`, a DCGM exporter serves the
 * simulated GPU's utilisation beside it (src/sim/dcgm-exporter.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answerEdgeErrors, edgeServerOptions } from "../api/http-edge.ts";
import { LlmdError } from "../api/errors.ts";
import { type SimConfig, servedModelNames } from "./config.ts";
import { createSimContext, type SimContext } from "./context.ts";
import { type DcgmExporter, startDcgmExporter } from "./dcgm-exporter.ts";
import { handleGeneration } from "./handlers/generate.ts";
import { simShuttingDown } from "./drain.ts";
import { handleHealth, handleMetrics, handleModels, handleReady, handleTokenize } from "./handlers/info.ts";
import { sendError } from "./http.ts";
import { resolveTopic } from "./kv-events-config.ts";
import { KvEventPublisher, skipSeqsFromEnv } from "./kv-publisher.ts";

/** A running simulator. */
export interface SimServer {
  /** Base URL, e.g. `http://127.0.0.1:8000` (loopback when bound to all interfaces). */
  url: string;
  port: number;
  context: SimContext;
  /** The KV event publisher, when `--kv-events-config` enables one. */
  kvEvents: KvEventPublisher | null;
  /** The DCGM exporter's port, when `--dcgm-port` runs one. */
  dcgmPort: number | undefined;
  /**
   * Graceful shutdown (drain.ts): readiness 503, new generation requests 503
   * `rejected-shutting-down`, running ones finish within `timeoutMs` (the rest are cut off with an
   * explicit error), then `close`. Resolves with how many were cut off.
   */
  drain(timeoutMs: number): Promise<number>;
  /** Aborts in-flight requests, stops the engine loop and closes every connection. */
  close(): Promise<void>;
}

type Handler = (ctx: SimContext, req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

const ROUTES = new Map<string, { method: string; handler: Handler }>(
  Object.entries({
    "/v1/completions": {
      method: "POST",
      handler: (ctx, req, res) => handleGeneration(ctx, req, res, "completion"),
    },
    "/v1/chat/completions": {
      method: "POST",
      handler: (ctx, req, res) => handleGeneration(ctx, req, res, "chat"),
    },
    "/v1/responses": {
      method: "POST",
      handler: (ctx, req, res) => handleGeneration(ctx, req, res, "responses"),
    },
    "/v1/models": { method: "GET", handler: (ctx, _req, res) => handleModels(ctx, res) },
    "/tokenize": { method: "POST", handler: handleTokenize },
    "/health": { method: "GET", handler: (_ctx, _req, res) => handleHealth(res) },
    "/ready": { method: "GET", handler: (ctx, _req, res) => handleReady(ctx, res) },
    "/health/ready": { method: "GET", handler: (ctx, _req, res) => handleReady(ctx, res) },
    "/metrics": { method: "GET", handler: (ctx, _req, res) => handleMetrics(ctx, res) },
    "/reset_prefix_cache": { method: "POST", handler: (ctx, _req, res) => handleResetPrefixCache(ctx, res) },
  } satisfies Record<string, { method: string; handler: Handler }>),
);

/** Starts a simulator on `config.host:config.port` (port 0 = any free port). */
export async function startSimServer(config: SimConfig): Promise<SimServer> {
  const context = createSimContext(config);
  const server = createServer(edgeServerOptions(config["header-timeout"]), (req, res) =>
    serve(context, req, res),
  );
  answerEdgeErrors(server, config["header-timeout"]);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = ["0.0.0.0", "::", ""].includes(config.host) ? "127.0.0.1" : config.host;
  let kvEvents: KvEventPublisher | null = null;
  let dcgm: DcgmExporter | undefined;
  let unsubscribe = () => {};
  try {
    kvEvents = await startKvEvents(config, host, port);
    await context.kvTransfer?.start(host);
    const dcgmPort = config["dcgm-port"];
    if (dcgmPort !== undefined)
      dcgm = await startDcgmExporter(context.driver, context.engineOptions, host, dcgmPort);
  } catch (err) {
    kvEvents?.close();
    context.kvTransfer?.close();
    server.close();
    throw err;
  }
  if (kvEvents) {
    const publisher = kvEvents;
    unsubscribe = context.driver.engine.onKvEvent((events) => publisher.publish(events));
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      context.driver.close();
      context.kvTransfer?.close();
      unsubscribe();
      kvEvents?.close();
      void dcgm?.close();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    context,
    kvEvents,
    dcgmPort: dcgm?.port,
    drain: async (timeoutMs) => {
      const cutOff = await context.drain.drain(timeoutMs);
      // Cut-off answers are flushed before the sockets close.
      await new Promise((resolve) => setImmediate(resolve));
      await close();
      return cutOff;
    },
    close,
  };
}

/**
 * Counts every request until its response closes. While draining, connections are not kept alive
 * and generation requests (the POST routes under `/v1/`) get 503 `rejected-shutting-down`.
 */
function serve(ctx: SimContext, req: IncomingMessage, res: ServerResponse): void {
  ctx.drain.track(res);
  if (ctx.drain.isDraining) {
    res.shouldKeepAlive = false;
    if (req.method === "POST" && req.url?.startsWith("/v1/")) {
      sendError(res, simShuttingDown());
      return;
    }
  }
  route(ctx, req, res);
}

/** Opens the publisher `--kv-events-config` asks for, or null; a bind failure is an `invalid_option`. */
async function startKvEvents(
  config: SimConfig,
  host: string,
  port: number,
): Promise<KvEventPublisher | null> {
  const kv = config["kv-events-config"];
  if (!kv?.enabled) return null;
  const topic = resolveTopic(kv.topic, { host, port, model: servedModelNames(config)[0]! });
  const encoding = config["kv-events-encoding"] ?? (config["use-vllm-map-event-format"] ? "map" : "array");
  try {
    return await KvEventPublisher.start({
      endpoint: kv.endpoint,
      replayEndpoint: kv.replayEndpoint,
      topic,
      bufferSteps: kv.bufferSteps,
      hwm: kv.hwm,
      maxQueueSize: kv.maxQueueSize,
      encoding,
      loraIds: new Map(config["lora-modules"].map((name, i) => [name, i + 1])),
      skipLiveSeqs: skipSeqsFromEnv(),
    });
  } catch (err) {
    const endpoints = [kv.endpoint, kv.replayEndpoint].filter((e) => e !== null).join(", ");
    throw new LlmdError(
      "invalid_option",
      `--kv-events-config: cannot open ${endpoints}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/**
 * `POST /reset_prefix_cache`, as vLLM's: drops every cached block (GPU and offload tiers), which
 * publishes AllBlocksCleared. vLLM answers 200 either way; here a refusal (requests still hold
 * blocks) is a 200 too, with `{"reset": false}` in the body for callers that care.
 */
function handleResetPrefixCache(ctx: SimContext, res: ServerResponse): void {
  const reset = ctx.driver.engine.resetPrefixCache();
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ reset }));
}

function route(ctx: SimContext, req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  const entry = ROUTES.get(path);
  if (!entry) {
    sendError(res, new LlmdError("not_found", `No route for ${path}`));
  } else if (req.method !== entry.method) {
    res.setHeader("allow", entry.method);
    sendError(res, new LlmdError("method_not_allowed", `Method ${req.method} not allowed on ${path}`));
  } else {
    Promise.resolve()
      .then(() => entry.handler(ctx, req, res))
      .catch((err: unknown) => sendError(res, err));
  }
}
