/**
 * Rewrites `cached_tokens` in the decode leg's answer as it passes to the client: a JSON body
 * whole, a stream event by event. Only events that carry a `"usage"` key are parsed (the final
 * usage chunk of a chat or completions stream, a Responses stream's `response.completed`); every
 * other byte passes unchanged, and complete events are passed on as they arrive.
 */
import { type JsonBody, rewriteCachedTokens } from "./legs.ts";

const USAGE_KEY = Buffer.from('"usage"');
const EVENT_END = Buffer.from("\n\n");
const EMPTY = Buffer.alloc(0);

/** `body` (a JSON answer) with its usage's `cached_tokens` set; unchanged when it has no usage. */
export function rewriteJsonBody(body: Buffer, cachedTokens: number): Buffer {
  if (!body.includes(USAGE_KEY)) return body;
  const parsed = parseObject(body.toString("utf8"));
  if (!parsed || !rewriteCachedTokens(parsed, cachedTokens)) return body;
  return Buffer.from(JSON.stringify(parsed));
}

/** Rewrites the `data:` lines of complete SSE events (`\n\n`-terminated) that carry a usage. */
function rewriteEvents(events: Buffer, cachedTokens: number): Buffer {
  const lines = events.toString("utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!line.startsWith("data:") || !line.includes('"usage"')) continue;
    const parsed = parseObject(line.slice(5));
    if (parsed && rewriteCachedTokens(parsed, cachedTokens)) lines[i] = `data: ${JSON.stringify(parsed)}`;
  }
  return Buffer.from(lines.join("\n"));
}

/** The stream side: feed each upstream chunk to `push`, and `end` once the stream ends. */
export class SseUsageRewriter {
  /** An event cut by a chunk boundary, kept until its end arrives. */
  private carry: Buffer = EMPTY;

  constructor(private readonly cachedTokens: number) {}

  /** The complete events so far, rewritten (empty while an event is still cut). */
  push(chunk: Buffer): Buffer {
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const end = data.lastIndexOf(EVENT_END);
    if (end < 0) {
      this.carry = data;
      return EMPTY;
    }
    const events = data.subarray(0, end + EVENT_END.length);
    this.carry = data.subarray(end + EVENT_END.length);
    return events.includes(USAGE_KEY) ? rewriteEvents(events, this.cachedTokens) : events;
  }

  /** What is left when the stream ends (an unterminated last event), rewritten. */
  end(): Buffer {
    const rest = this.carry;
    this.carry = EMPTY;
    return rest.includes(USAGE_KEY) ? rewriteEvents(rest, this.cachedTokens) : rest;
  }
}

function parseObject(text: string): JsonBody | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as JsonBody)
      : undefined;
  } catch {
    return undefined;
  }
}
