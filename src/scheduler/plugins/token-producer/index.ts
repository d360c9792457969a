/**
 * `token-producer` (alias `tokenizer`, deprecated): fills `request.tokens` from the prompt text
 * before other producers run (reference §2.5). Backend `estimate`: the router's tokenizer (one
 * token per 4 characters, exactly what the simulator uses).
 */
import { z } from "zod";
import type { Tokenizer } from "../../../tokenizer/tokenizer.ts";
import { TOKENIZED_PROMPT } from "../../framework/data-keys.ts";
import type { DataProducer, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

const parameters = z
  .strictObject({
    modelName: z.string().optional(),
    /** Multimodal estimate knobs (images/video); text-only prompts do not use them. */
    estimate: z.looseObject({}).optional(),
    /** Remote render backend: accepted for config compatibility; llmd tokenizes with the estimate. */
    vllm: z
      .strictObject({
        url: z.string().default("http://localhost:8000"),
        timeout: z.string().optional(),
        mmTimeout: z.string().optional(),
      })
      .optional(),
  })
  .prefault({});

/** Validated parameters of `token-producer`. */
export type TokenProducerParams = z.infer<typeof parameters>;

class TokenProducer implements DataProducer {
  readonly type = "token-producer";

  constructor(
    readonly name: string,
    private readonly tokenizer: Tokenizer,
  ) {}

  /** Leaves tokens another stage already set (e.g. token-id prompts) untouched. */
  produce(ctx: SchedulingContext): void {
    ctx.request.tokens ??= this.tokenizer.encode(ctx.request.promptText);
  }
}

/** Registry entry for `token-producer`. */
export const definition: PluginDefinition<TokenProducerParams> = {
  type: "token-producer",
  aliases: ["tokenizer"],
  stability: "beta",
  description: "Tokenizes the prompt into request.tokens (estimate backend: 4 characters per token)",
  parameters,
  produces: [TOKENIZED_PROMPT],
  create: (_params, env) => new TokenProducer(env.name, env.tokenizer),
};
