/**
 * The client side of a Responses turn: the gateway forwards the model server's answer (chat
 * completions or stateless Responses, JSON or SSE) into this sink, which renders it as the
 * Responses API for the client, and holds the final answer until the turn is stored, so a store
 * failure is answered explicitly instead of losing the turn. Gateway-made error answers (a 429
 * from flow control, a 502) and upstream errors pass through unchanged.
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { LlmdError } from "../api/errors.ts";
import { outputItemId, outputMessage } from "../api/responses.ts";
import { sendError, sendJson, sseErrorEvent } from "./respond.ts";
import type { ClientSink } from "./types.ts";
import { type Generation, type ResponseEcho, ResponseEvents, responseObject } from "../responses/render.ts";
import { GenerationReader, type ResponsesBackend } from "../responses/upstream.ts";

/** Called once the generation is complete, before the client sees its end; an error answers instead. */
export type TurnDone = (
  generation: Generation,
  endpointKey: string | undefined,
) => Promise<LlmdError | undefined>;

type Mode = "pending" | "passthrough" | "stream" | "json";

/** Headers that never describe the translated body. */
const DROPPED = new Set(["content-length", "content-type", "transfer-encoding", "connection", "keep-alive"]);

function answerHeaders(upstream: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(upstream)) if (!DROPPED.has(name)) out[name] = value;
  return out;
}

/** See the module comment. */
export class ResponsesSink implements ClientSink {
  private mode: Mode = "pending";
  private headers: OutgoingHttpHeaders = {};
  private endpointKey: string | undefined;
  private readonly body: string[] = [];
  private readonly reader: GenerationReader;
  private readonly events: ResponseEvents;
  private finishing = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly echo: ResponseEcho,
    backend: ResponsesBackend,
    private readonly done: TurnDone,
  ) {
    this.reader = new GenerationReader(backend);
    this.events = new ResponseEvents(echo);
  }

  get destroyed(): boolean {
    return this.res.destroyed;
  }
  get writableFinished(): boolean {
    return this.res.writableFinished;
  }
  get writableEnded(): boolean {
    return this.finishing || this.res.writableEnded;
  }
  get headersSent(): boolean {
    return this.mode !== "pending";
  }

  writeHead(status: number, headers: OutgoingHttpHeaders): this {
    const endpoint = headers["x-llmd-endpoint"];
    this.endpointKey = typeof endpoint === "string" ? endpoint : undefined;
    if (status !== 200) {
      this.mode = "passthrough";
      this.res.writeHead(status, headers);
      return this;
    }
    this.headers = answerHeaders(headers);
    if (!String(headers["content-type"] ?? "").startsWith("text/event-stream")) {
      this.mode = "json";
      return this;
    }
    this.mode = "stream";
    this.res.writeHead(200, {
      ...this.headers,
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
    });
    this.res.write(this.events.opening());
    return this;
  }

  flushHeaders(): void {
    if (this.mode === "stream" || this.mode === "passthrough") this.res.flushHeaders();
  }

  write(chunk: Buffer | string): boolean {
    if (this.mode === "passthrough") return this.res.write(chunk);
    if (this.mode !== "stream") {
      this.body.push(chunk.toString());
      return true;
    }
    const deltas = this.reader.chunk(chunk.toString());
    if (deltas.length === 0) return true;
    return this.res.write(deltas.map((d) => this.events.delta(d)).join(""));
  }

  end(chunk?: Buffer | string): this {
    if (this.mode === "passthrough" || this.mode === "pending") {
      this.res.end(chunk);
      return this;
    }
    if (this.finishing) return this;
    this.finishing = true;
    const text = chunk === undefined ? "" : chunk.toString();
    if (this.mode === "stream") this.endStream(text);
    else this.endJson(this.body.join("") + text);
    return this;
  }

  once(event: "close" | "drain", listener: () => void): this {
    this.res.once(event, listener);
    return this;
  }

  off(event: "close" | "drain", listener: () => void): this {
    this.res.off(event, listener);
    return this;
  }

  /** A started stream failed (eviction, upstream failure, drain): an `error` event ends it. */
  endWithError(error: LlmdError): void {
    this.finishing = true;
    if (this.mode === "stream") this.res.end(this.events.error(error.code, error.message));
    else this.res.end(sseErrorEvent(error));
  }

  private endStream(tail: string): void {
    for (const delta of this.reader.chunk(tail)) this.res.write(this.events.delta(delta));
    const generation = this.reader.generation;
    void this.done(generation, this.endpointKey).then((error) => {
      if (this.res.destroyed) return;
      this.res.end(error ? this.events.error(error.code, error.message) : this.events.closing(generation));
    });
  }

  private endJson(body: string): void {
    try {
      this.reader.json(body);
    } catch {
      sendError(this.res, new LlmdError("upstream_failed", "the model server's answer is not valid JSON"));
      return;
    }
    const generation = this.reader.generation;
    void this.done(generation, this.endpointKey).then((error) => {
      if (error) return sendError(this.res, error, this.headers);
      const output = [outputMessage(outputItemId(this.echo.id), generation.text)];
      sendJson(this.res, 200, responseObject(this.echo, output, generation), this.headers);
    });
  }
}
