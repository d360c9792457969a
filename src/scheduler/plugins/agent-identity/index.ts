/**
 * `agent-identity` (alpha; reference §2.5, §9): names the agent session a request belongs to from
 * the headers coding agents send, as request attribute `agent-identity` (also the fairness id
 * when no `x-llm-d-inference-fairness-id` is given, and a session-affinity source).
 */
import { z } from "zod";
import { AGENT_IDENTITY_ATTRIBUTE as AGENT_IDENTITY } from "../../framework/data-keys.ts";
import type { RequestHeaderProcessor, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

/** Claude Code, OpenCode, Codex (both spellings), in llm-d's order. */
export const AGENT_SESSION_HEADERS = [
  "x-claude-code-session-id",
  "x-session-affinity",
  "session-id",
  "session_id",
];

const parameters = z
  .strictObject({ additionalSessionHeaders: z.array(z.string().min(1)).default([]) })
  .prefault({});

/** Validated parameters of `agent-identity`. */
export type AgentIdentityParams = z.infer<typeof parameters>;

class AgentIdentity implements RequestHeaderProcessor {
  readonly type = "agent-identity";
  private readonly headers: readonly string[];

  constructor(
    readonly name: string,
    additional: readonly string[],
  ) {
    this.headers = [...AGENT_SESSION_HEADERS, ...additional.map((h) => h.toLowerCase())];
  }

  processRequestHeaders(ctx: SchedulingContext): void {
    for (const header of this.headers) {
      const value = ctx.request.headers[header];
      if (value) {
        ctx.request.attributes.set(AGENT_IDENTITY, value);
        return;
      }
    }
  }
}

/** Registry entry for `agent-identity`. */
export const definition: PluginDefinition<AgentIdentityParams> = {
  type: "agent-identity",
  stability: "alpha",
  description: "Sets request attribute agent-identity from coding-agent session headers",
  parameters,
  create: (params, env) => new AgentIdentity(env.name, params.additionalSessionHeaders),
};
