/**
 * `token-producer` (alias `tokenizer`, deprecated): fills `request.tokens` before other producers
 * run (reference §2.5). The `estimate` backend is the router's stand-in tokenizer (one token per 4
 * characters, what `llmd sim` counts without a profile); once the live host starts the plugin, a
 * chat's ids are kept per conversation (char4-conversations.ts). A real tokenizer (`tokenizer:
 * llama3.1`, or the `vllm` backend with a `modelName` whose tokenizer is bundled) gives the model
 * server's own ids: a chat through the model's template, incrementally per conversation
 * (incremental.ts), with new text tokenized on a worker thread once the live host starts the plugin.
 */
import { z } from "zod";
import type { ChatMessageLike } from "../../../api/prompt.ts";
import { type CpuSplit, reserveLoopCpu } from "../../../core/cpu-affinity.ts";
import { Char4Conversations } from "../../../tokenizer/char4-conversations.ts";
import { IncrementalEncoder } from "../../../tokenizer/incremental.ts";
import type { MessageTrie } from "../../../tokenizer/message-trie.ts";
import { TOKENIZER_NAMES, type TokenizerName, tokenizerForModel } from "../../../tokenizer/registry.ts";
import { CharChunkTokenizer, type Tokenizer } from "../../../tokenizer/tokenizer.ts";
import { textLength } from "../../../tokenizer/utf16-words.ts";
import { WorkerEncoder } from "../../../tokenizer/worker-encoder.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { TOKENIZED_PROMPT } from "../../framework/data-keys.ts";
import type { HostedPlugin, PluginMetric } from "../../framework/hosted.ts";
import type { DataProducer, SchedulingContext, SchedulingRequest } from "../../framework/types.ts";
import { yieldAfter } from "../shared/next-turn.ts";
import { chatMessages, promptPieces } from "../shared/prompt-pieces.ts";

const parameters = z
  .strictObject({
    modelName: z.string().optional(),
    /** Multimodal estimate knobs (images/video); text-only prompts do not use them. */
    estimate: z.looseObject({}).optional(),
    /** vLLM's render backend: llmd renders locally with `modelName`'s bundled tokenizer, if any. */
    vllm: z
      .strictObject({
        url: z.string().default("http://localhost:8000"),
        timeout: z.string().optional(),
        mmTimeout: z.string().optional(),
      })
      .optional(),
    /** llmd: the tokenizer by registry name (default: the `vllm` model's, else `char4`, the estimate). */
    tokenizer: z.enum(TOKENIZER_NAMES).optional(),
    /** llmd: byte budget of the held conversations' messages and their ids (a real tokenizer's; the estimate's once started). */
    cacheBytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024 * 1024),
    /**
     * llmd: `dedicated` gives the event loop's thread a CPU of its own once a bundled tokenizer's
     * worker starts; the worker and the process's other threads run on the rest (Linux, two CPUs
     * or more, util-linux `taskset`).
     */
    loopCpu: z.enum(["shared", "dedicated"]).default("shared"),
  })
  .prefault({});

/** Validated parameters of `token-producer`. */
export type TokenProducerParams = z.infer<typeof parameters>;

/** The tokenizer the parameters name. */
export function tokenizerOf(params: TokenProducerParams): TokenizerName {
  if (params.tokenizer) return params.tokenizer;
  const model = params.vllm ? params.modelName : undefined;
  return (model && tokenizerForModel(model)) || "char4";
}

/** Code units of the prompt text, read without decoding a body's byte pieces. */
function promptUnits(request: SchedulingRequest): number {
  return request.promptParts ? textLength(request.promptParts) : request.promptText.length;
}

/** `token-producer`'s gauges of a held-conversations cache (null while there is none). */
function tokenCacheMetrics(trie: () => MessageTrie | null): PluginMetric[] {
  return [
    {
      name: "llmd_token_cache_size_bytes",
      help: "Bytes held by token-producer's per-message token cache",
      type: "gauge",
      value: () => trie()?.bytes ?? 0,
    },
    {
      name: "llmd_token_cache_segments",
      help: "Message segments held by token-producer's token cache",
      type: "gauge",
      value: () => trie()?.size ?? 0,
    },
  ];
}

/**
 * `estimate`: the stand-in tokenizer over the prompt text, on the event loop (≈ 0.7 ms at 200K
 * tokens); the built-in one reads the prompt's pieces in place (`promptPieces`), so a chat's
 * rendered text is never flattened nor a large body's prompt decoded for it. Started by the live
 * host, the built-in one keeps each chat's ids per conversation (`Char4Conversations`: a turn
 * encodes only its new text, and the prefix producers keep their keys with the conversation's
 * array) and yields before the producers after it on a long prompt (their work grows with the
 * prompt's blocks: a precise match walks each of a 200K-token prompt's ≈ 3,200).
 */
class EstimateTokenProducer implements DataProducer, HostedPlugin {
  readonly type = "token-producer";
  private conversations: Char4Conversations | null = null;

  constructor(
    readonly name: string,
    private readonly tokenizer: Tokenizer,
    private readonly cacheBytes: number,
  ) {}

  /** Leaves tokens another stage already set (e.g. token-id prompts) untouched. */
  produce(ctx: SchedulingContext): void | Promise<void> {
    const { request } = ctx;
    if (request.tokens) return;
    const held = this.heldChat(request);
    if (held) {
      request.tokens = held;
      return yieldAfter(held.length);
    }
    request.tokens =
      this.tokenizer instanceof CharChunkTokenizer
        ? this.tokenizer.encodeText(promptPieces(request))
        : this.tokenizer.encode(request.promptText);
  }

  /** A chat's ids from the held conversations, or null (not started, not a chat, rendered otherwise). */
  private heldChat(request: SchedulingRequest): Uint32Array | null {
    const messages = chatMessages(request);
    if (!this.conversations || !messages) return null;
    return this.conversations.encodeChat(messages, promptUnits(request));
  }

  async start(): Promise<void> {
    if (this.tokenizer instanceof CharChunkTokenizer)
      this.conversations = new Char4Conversations(this.tokenizer, this.cacheBytes);
  }

  endpointsChanged(): void {}

  async close(): Promise<void> {
    this.conversations = null;
  }

  metrics(): readonly PluginMetric[] {
    return tokenCacheMetrics(() => this.conversations?.trie ?? null);
  }
}

/** A real tokenizer: the model server's ids, incrementally, heavy work on a worker once started. */
class ModelTokenProducer implements DataProducer, HostedPlugin {
  readonly type = "token-producer";
  private worker: WorkerEncoder | null = null;
  /** With `loopCpu: dedicated` once pinned: the event loop's CPU and the rest; else undefined. */
  private split: CpuSplit | undefined;

  constructor(
    readonly name: string,
    private readonly encoder: IncrementalEncoder,
    private readonly dedicatedCpu: boolean,
  ) {}

  produce(ctx: SchedulingContext): void | Promise<void> {
    const { request } = ctx;
    if (request.tokens) return;
    const messages = request.body.messages;
    const ids = Array.isArray(messages)
      ? this.encoder.encodeChat(messages as ChatMessageLike[])
      : this.encoder.encodePrompt(request.promptText);
    request.exactTokens = true;
    if (ids instanceof Uint32Array) request.tokens = ids;
    else
      return ids.then((tokens) => {
        request.tokens = tokens;
      });
  }

  async start(): Promise<void> {
    this.split = this.dedicatedCpu ? await reserveLoopCpu() : undefined;
    this.worker = new WorkerEncoder(this.encoder.tokenizer, this.split?.others);
    this.encoder.useWorker(this.worker);
  }

  endpointsChanged(): void {}

  async close(): Promise<void> {
    this.encoder.useWorker(null);
    await this.worker?.close();
    this.worker = null;
  }

  metrics(): readonly PluginMetric[] {
    return [
      ...tokenCacheMetrics(() => this.encoder.trie),
      {
        name: "llmd_event_loop_cpu",
        help: "The CPU the event loop's thread has to itself (token-producer loopCpu: dedicated), -1 if none",
        type: "gauge",
        value: () => this.split?.loop[0] ?? -1,
      },
    ];
  }
}

/** Registry entry for `token-producer`. */
export const definition: PluginDefinition<TokenProducerParams> = {
  type: "token-producer",
  aliases: ["tokenizer"],
  stability: "beta",
  description:
    "Tokenizes the prompt into request.tokens (estimate: 4 characters per token; or a bundled model tokenizer)",
  parameters,
  produces: [TOKENIZED_PROMPT],
  create: (params, env) => {
    const name = tokenizerOf(params);
    if (name === "char4") return new EstimateTokenProducer(env.name, env.tokenizer, params.cacheBytes);
    const encoder = new IncrementalEncoder(name, params.cacheBytes);
    return new ModelTokenProducer(env.name, encoder, params.loopCpu === "dedicated");
  },
};
