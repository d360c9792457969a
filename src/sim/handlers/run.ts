/**
 * One admitted generation request in flight: submits it to the engine driver, turns step outputs
 * into SSE chunks (or one JSON body at the end), records latency metrics in engine time, and aborts
 * the engine request the moment the client goes away or the drain timeout cuts it off.
 */
import type { ServerResponse } from "node:http";
import { LlmdError, toOpenAIError } from "../../api/errors.ts";
import type { GenerationRequest, Usage } from "../../api/openai.ts";
import type { StepOutput } from "../../engine/types.ts";
import type { SimContext } from "../context.ts";
import type { Interruptible } from "../drain.ts";
import type { OutputSink } from "../driver.ts";
import { sendError, sendJson, sseData, startSse } from "../http.ts";
import { type PlannedOutput, tokensText } from "../output.ts";
import type { ResponseFormat, ResponseHead, StreamEncoder } from "./format.ts";

/** A validated request the server agreed to serve. */
export interface Admitted {
  request: GenerationRequest;
  promptIds: Uint32Array;
  lora: string | undefined;
  output: PlannedOutput;
  /** P/D prefill leg: hold the KV for a remote decode when finished. */
  holdKv?: boolean;
  /** P/D decode leg: leading prompt tokens whose KV was pulled from the prefill. */
  remoteKvTokens?: number;
}

/** Streams or collects one request's output; single use. */
export class GenerationRun implements OutputSink, Interruptible {
  private readonly head: ResponseHead;
  /** The SSE text of a streamed response; undefined when not streaming. */
  private readonly encoder: StreamEncoder | undefined;
  private readonly arrivalMs: number;
  private lastTokenMs = 0;
  private generated = 0;
  /** Output tokens already sent as SSE chunks. */
  private streamed = 0;
  private cachedTokens = 0;
  private firstSeen = false;
  private done = false;
  /** This run's slot in the drain's running generations (-1 before it started). */
  private drainSlot = -1;

  constructor(
    private readonly ctx: SimContext,
    private readonly res: ServerResponse,
    private readonly job: Admitted,
    private readonly format: ResponseFormat,
  ) {
    this.head = {
      id: format.idPrefix + ctx.nextId(),
      created: Math.floor(Date.now() / 1000),
      model: job.request.model,
    };
    this.arrivalMs = ctx.driver.now();
    if (job.request.stream) this.encoder = format.stream(this.head, job.request.includeUsage);
  }

  /** Queues the request in the engine and starts the response. */
  start(): void {
    const { promptIds, output, lora, request, holdKv, remoteKvTokens } = this.job;
    const engineRequest = {
      id: this.head.id,
      promptTokens: promptIds,
      maxTokens: output.tokens,
      lora,
      holdKvOnFinish: holdKv,
      remoteKvTokens,
    };
    const { cacheSalt, priority } = request;
    const rejection = this.ctx.driver.submit({ ...engineRequest, cacheSalt, priority }, this);
    if (rejection) {
      this.done = true;
      sendError(
        this.res,
        new LlmdError("engine_rejected", `Engine refused the request: ${rejection.reason}`),
      );
      return;
    }
    this.res.on("close", this.onClose);
    this.drainSlot = this.ctx.drain.started(this);
    if (this.encoder) {
      startSse(this.res);
      const opening = this.encoder.open();
      if (opening) this.res.write(opening);
    }
  }

  /** Engine output for this request, visible at engine time `atMs`. */
  onOutput(out: StepOutput, atMs: number): void {
    this.generated = out.generated;
    if (out.newTokens > 0) this.recordLatency(out, atMs);
    if (this.encoder && this.chunkDue(out)) this.streamChunk(this.encoder, out);
    if (out.finished) this.finish(out.generated, atMs);
  }

  /**
   * vLLM's `--stream-interval`: a chunk goes out with the first token, once `stream-interval` tokens
   * have gathered since the last one, and when the request finishes.
   */
  private chunkDue(out: StepOutput): boolean {
    if (out.finished) return true;
    const pending = out.generated - this.streamed;
    return pending > 0 && (this.streamed === 0 || pending >= this.ctx.config["stream-interval"]);
  }

  private streamChunk(encoder: StreamEncoder, out: StepOutput): void {
    const text = tokensText(this.job.output, this.streamed, out.generated);
    const finish = out.finished ? this.job.output.finishReason : null;
    this.res.write(encoder.chunk(text, finish));
    this.streamed = out.generated;
  }

  private recordLatency(out: StepOutput, atMs: number): void {
    const metrics = this.ctx.metrics;
    if (!this.firstSeen) {
      this.firstSeen = true;
      this.cachedTokens = out.cachedTokens;
      metrics.firstToken((atMs - this.arrivalMs) / 1000);
      if (out.newTokens > 1) metrics.tokensAfter(0, out.newTokens - 1);
    } else {
      metrics.tokensAfter((atMs - this.lastTokenMs) / 1000, out.newTokens);
    }
    this.lastTokenMs = atMs;
  }

  private finish(generated: number, atMs: number): void {
    this.done = true;
    this.ctx.drain.ended(this.drainSlot);
    const { output, promptIds } = this.job;
    this.ctx.metrics.finished(
      output.finishReason,
      (atMs - this.arrivalMs) / 1000,
      promptIds.length,
      generated,
    );
    const usage = this.usage(generated);
    if (this.encoder) this.res.end(this.encoder.close(output.text, output.finishReason, usage));
    else
      sendJson(this.res, 200, {
        ...this.format.full(this.head, output.text, output.finishReason, usage),
        ...this.transferParams(),
      });
  }

  /** A prefill leg's `kv_transfer_params` (its KV is now held), else nothing. */
  private transferParams(): { kv_transfer_params?: Record<string, unknown> } {
    const agent = this.ctx.kvTransfer;
    if (!this.job.holdKv || !agent) return {};
    return { kv_transfer_params: agent.hold(this.head.id, this.job.promptIds) };
  }

  private usage(generated: number): Usage {
    const prompt = this.job.promptIds.length;
    return {
      prompt_tokens: prompt,
      completion_tokens: generated,
      total_tokens: prompt + generated,
      prompt_tokens_details: { cached_tokens: this.cachedTokens },
    };
  }

  /** Cut off by the drain timeout: an SSE error event once streaming, else the error body. */
  interrupt(error: LlmdError): void {
    if (this.done) return;
    this.abort();
    if (this.res.headersSent) this.res.end(sseData(toOpenAIError(error).body));
    else sendError(this.res, error);
  }

  private readonly onClose = (): void => {
    if (!this.done) this.abort();
  };

  private abort(): void {
    this.done = true;
    this.ctx.drain.ended(this.drainSlot);
    this.ctx.driver.abort(this.head.id);
    const elapsedS = (this.ctx.driver.now() - this.arrivalMs) / 1000;
    this.ctx.metrics.finished("abort", elapsedS, this.job.promptIds.length, this.generated);
  }
}
