/**
 * Test support: seeded random conversations that continue, fork, repeat and edit each other, the
 * turn shapes a tokenizer's per-conversation state and the kept block keys must survive.
 */
import type { ChatMessageLike } from "../api/prompt.ts";

const WORDS = ["cache", " block", " route", " replica", "\n\n", " 42", " naïve", "ꙮ", " prefix", "  "];

/** A deterministic generator (a linear congruential one), so a failure replays. */
export function randomFrom(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state >>> 8) % n;
  };
}

/**
 * The next prompt of a seeded walk over conversations: one of the earlier prompts (or the first,
 * a system message) again, with an earlier message edited, continued by a reply and a question,
 * or forked after one of its messages. Every prompt returned joins the conversations walked.
 */
export function randomTurns(random: (n: number) => number): () => ChatMessageLike[] {
  const text = () => Array.from({ length: 5 + random(60) }, () => WORDS[random(WORDS.length)]).join("");
  const conversations: ChatMessageLike[][] = [[{ role: "system", content: "You are terse." }]];
  return () => {
    const base = conversations[random(conversations.length)] as ChatMessageLike[];
    const kind = random(4);
    let next: ChatMessageLike[];
    if (kind === 0) next = base;
    else if (kind === 1 && base.length > 1) {
      const at = 1 + random(base.length - 1);
      next = base.map((m, i) => (i === at ? { role: m.role, content: text() } : m));
    } else {
      const kept = kind === 2 ? base.slice(0, 1 + random(base.length)) : base;
      next = [...kept, { role: "assistant", content: text() }, { role: "user", content: text() }];
    }
    conversations.push(next);
    return next;
  };
}
