/**
 * Labelled spans of synchronous work inside a timed turn, so the slowest turns can name the section
 * that made their longest block: every scheduler plugin call (by extension point and plugin name),
 * the token producer's own steps on the event loop (the message-tree walk, rendering the new
 * messages, posting them to the worker, writing the new ids, holding the new messages, and a copy
 * of held ids made on the loop: the stand-in's forks, and with a worker only a raced turn, as the
 * worker builds a fork's array) and the approximate index's deferred inserts (`PrefixIndex.settle`, which runs on a
 * timer after the decision, or first thing in the next read). Methods are wrapped in place, on the
 * plugin instances and on the tokenizer classes' prototypes, for this benchmark's process only; a
 * wrapped call that returns a promise counts up to its return (the wait is not on the loop).
 */
import { PrefixIndex } from "../../src/kv-index/prefix-index.ts";
import { EXTENSION_POINTS } from "../../src/scheduler/framework/instrument.ts";
import type { Scheduler } from "../../src/scheduler/framework/scheduler.ts";
import { ConversationIds } from "../../src/tokenizer/conversation-ids.ts";
import { MessageTrie } from "../../src/tokenizer/message-trie.ts";
import { CHAT_TEMPLATES } from "../../src/tokenizer/registry.ts";
import { WorkerEncoder } from "../../src/tokenizer/worker-encoder.ts";

/** One call's synchronous part, `performance.now()` times; `depth` 0 is outermost. */
export interface Span {
  label: string;
  start: number;
  end: number;
  depth: number;
}

type Method = (...args: unknown[]) => unknown;

/** Records spans from wrapped methods while `recording`. */
export class SpanRecorder {
  spans: Span[] = [];
  recording = false;
  private depth = 0;

  /** Replaces `target[method]` by a wrapper recording a span labelled `label` per call. */
  wrap(target: object, method: string, label: string): void {
    const holder = target as Record<string, Method>;
    const inner = holder[method];
    if (typeof inner !== "function") return;
    const recorder = this;
    holder[method] = function (this: unknown, ...args: unknown[]) {
      return recorder.time(label, () => inner.apply(this, args));
    };
  }

  /** Runs `work`, recording its span. */
  time<T>(label: string, work: () => T): T {
    if (!this.recording) return work();
    const depth = this.depth++;
    const start = performance.now();
    try {
      return work();
    } finally {
      this.depth--;
      this.spans.push({ label, start, end: performance.now(), depth });
    }
  }

  /** Starts a turn's recording. */
  start(): void {
    this.spans = [];
    this.recording = true;
  }

  /** Ends it; returns its spans. */
  stop(): Span[] {
    this.recording = false;
    return this.spans;
  }
}

/** The process's recorder: the classes' prototypes are wrapped once, for every case. */
export const spans = new SpanRecorder();

/** The label of the approximate index's deferred inserts. */
export const SETTLE = "PrefixIndex.settle (deferred inserts)";

let classesWrapped = false;

/** Wraps the token producer's loop-side steps and the prefix index's settle (once per process). */
export function probeClasses(): void {
  if (classesWrapped) return;
  classesWrapped = true;
  spans.wrap(PrefixIndex.prototype, "settle", SETTLE);
  spans.wrap(MessageTrie.prototype, "match", "tokenizer: message-tree walk");
  spans.wrap(MessageTrie.prototype, "extend", "tokenizer: hold new messages");
  spans.wrap(WorkerEncoder.prototype, "encode", "tokenizer: post to worker");
  spans.wrap(
    ConversationIds,
    "copyOf",
    "tokenizer: copy ids on the loop (a stand-in fork, no worker, or a raced turn)",
  );
  spans.wrap(ConversationIds.prototype, "append", "tokenizer: write new ids");
  for (const template of Object.values(CHAT_TEMPLATES))
    spans.wrap(template, "segment", "tokenizer: render new messages");
}

/** Wraps every plugin method `scheduler` calls at an extension point. */
export function probeScheduler(scheduler: Scheduler): void {
  const { parts } = scheduler;
  const plugins = new Set<object>([
    parts.profileHandler,
    ...parts.screeners,
    ...parts.producers,
    ...parts.preRequests,
    ...[...parts.profiles.values()].flatMap((p) => [
      ...p.filters,
      ...p.scorers.map((s) => s.scorer),
      p.picker,
    ]),
  ]);
  for (const plugin of plugins) {
    const { name } = plugin as { name: string };
    for (const [method, point] of Object.entries(EXTENSION_POINTS))
      spans.wrap(plugin, method, `${point} ${name}`);
  }
}

/**
 * Each label's own time (its spans less the spans inside them), largest first: all of them, or
 * those within `window` (`[from, to)`), whose time no span covers is then "unlabelled".
 */
export function selfTimes(all: readonly Span[], window?: readonly [number, number]): [string, number][] {
  const inside = window ? all.filter((s) => s.start >= window[0] && s.end <= window[1]) : all;
  const own = new Map<string, number>();
  let covered = 0;
  for (const s of inside) {
    const children = inside.filter((c) => c.depth === s.depth + 1 && c.start >= s.start && c.end <= s.end);
    let ms = s.end - s.start;
    for (const c of children) ms -= c.end - c.start;
    own.set(s.label, (own.get(s.label) ?? 0) + ms);
    if (s.depth === 0) covered += s.end - s.start;
  }
  if (window) own.set("unlabelled", Math.max(0, window[1] - window[0] - covered));
  return [...own].sort((a, b) => b[1] - a[1]);
}
