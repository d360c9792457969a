/**
 * Multi-turn chat generator (shape of vLLM's benchmarks/multi_turn defaults): a common system
 * prompt, a per-conversation document, 12–18 turns of 120–160-token user messages and 80–120-token
 * answers; each turn resends the whole history (answers replayed from the plan, not live output).
 */
import { AgentSession, type TurnPlan } from "./agent-session.ts";
import { Rng } from "./rng.ts";
import { blockSegments, makeRequest, type Segment } from "./types.ts";

/** Parameters of the chat generator. */
export interface ChatOptions {
  commonPrefixTokens: number;
  /** Median of the log-normal per-conversation prefix, tokens (capped at 5,000). */
  conversationPrefixTokens: number;
  minTurns: number;
  maxTurns: number;
  userTokens: [number, number];
  answerTokens: [number, number];
  /** Mean think time between turns, ms (exponential). */
  thinkMeanMs: number;
  seed: number;
}

/** vLLM multi_turn defaults (think time: 5 s mean, ours). */
export const CHAT_DEFAULTS: Omit<ChatOptions, "seed"> = {
  commonPrefixTokens: 500,
  conversationPrefixTokens: 1000,
  minTurns: 12,
  maxTurns: 18,
  userTokens: [120, 160],
  answerTokens: [80, 120],
  thinkMeanMs: 5000,
};

function between(rng: Rng, [lo, hi]: [number, number]): number {
  return lo + rng.int(hi - lo + 1);
}

/** Session factory for `ClosedLoopWorkload`. */
export function chatSession(options: ChatOptions, index: number): AgentSession {
  const rng = new Rng(`chat:${options.seed}:${index}`);
  const ns = `chat:${options.seed}:${index}`;
  const docTokens = Math.min(5000, Math.round(rng.lognormal(options.conversationPrefixTokens, 0.5)));
  const history: Segment[] = [
    ...blockSegments("chat:common", 0, options.commonPrefixTokens, 64),
    ...blockSegments(`${ns}:doc`, 0, Math.max(1, docTokens), 64),
  ];
  const turns: TurnPlan[] = [];
  const count = between(rng, [options.minTurns, options.maxTurns]);
  for (let k = 0; k < count; k++) {
    const user = between(rng, options.userTokens);
    const answer = between(rng, options.answerTokens);
    const thinkMs = k === 0 ? 0 : rng.exponential(options.thinkMeanMs);
    turns.push({
      thinkMs,
      build: () => {
        history.push({ ns: `${ns}:user`, id: k, tokens: user });
        const request = makeRequest(`${ns}:${k}`, history.slice(), answer, { sessionId: ns, kind: "chat" });
        history.push({ ns: `${ns}:answer`, id: k, tokens: answer });
        return request;
      },
    });
  }
  return new AgentSession({ turns });
}
