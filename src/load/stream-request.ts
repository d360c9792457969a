/**
 * One streaming OpenAI completions request over raw undici, timed client-side: first token
 * (first SSE event carrying text), end, usage (`prompt_tokens_details.cached_tokens`, less what the
 * router's staged prefill prefilled, as the fleet simulator counts it), and how it ended, named as
 * the fleet simulator names outcomes.
 */
import { type Dispatcher, request } from "undici";
import { STAGED_TOKENS_HEADER } from "../api/openai.ts";

/** What the client saw, times in ms of `performance.now()`. */
export interface StreamOutcome {
  /** When the serialized request was handed to undici: the client's TTFT clock starts here. */
  sentAt: number;
  firstTokenAt: number;
  endAt: number;
  completionTokens: number;
  promptTokens: number;
  /** Prompt tokens found cached, the ones the router's stages prefilled (`x-llmd-staged-tokens`) left out. */
  cachedTokens: number;
  /**
   * How the server answered: `served`, the router's `x-llm-d-request-dropped-reason` (e.g.
   * `rejected-saturated`, `evicted`, also when it arrives as an SSE error event mid-stream), or
   * `failed-<status or error code>`; undefined when no answer came at all (transport error).
   */
  outcome?: string;
  /** Transport error code or the outcome, when not served. */
  error?: string;
}

interface ChunkJson {
  error?: { code?: string | number };
  choices?: { text?: string; delta?: { content?: string } }[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
  };
}

/** Sends `POST {baseUrl}/v1/completions` with `body` (a streaming completions request, serialised). */
export function streamCompletion(
  baseUrl: string,
  json: string,
  headers: Record<string, string>,
  dispatcher?: Dispatcher,
): Promise<StreamOutcome> {
  return streamPost(`${baseUrl.replace(/\/$/, "")}/v1/completions`, json, headers, onEvent, dispatcher);
}

/** An outcome with nothing seen yet. */
export function emptyOutcome(): StreamOutcome {
  return {
    sentAt: Number.NaN,
    firstTokenAt: Number.NaN,
    endAt: Number.NaN,
    completionTokens: 0,
    promptTokens: 0,
    cachedTokens: 0,
  };
}

/**
 * POSTs `json` to `url` and reads its SSE answer, handing each `data:` payload to `onData`; a
 * non-200 answer is the router's dropped reason or `failed-<status>`, a cut stream
 * `failed-<error code>`. Shared by the completions and the Responses clients.
 */
export async function streamPost<T extends StreamOutcome>(
  url: string,
  json: string,
  headers: Record<string, string>,
  onData: (data: string, outcome: T) => void,
  dispatcher?: Dispatcher,
  outcome: T = emptyOutcome() as T,
): Promise<T> {
  try {
    outcome.sentAt = performance.now();
    const res = await request(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: json,
      ...(dispatcher ? { dispatcher } : {}),
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      const reason = res.headers["x-llm-d-request-dropped-reason"];
      outcome.outcome = typeof reason === "string" ? reason : `failed-${res.statusCode}`;
    } else {
      outcome.outcome = "served";
      await readEvents(res.body, outcome, onData);
      const staged = Number(res.headers[STAGED_TOKENS_HEADER] ?? 0);
      if (staged > 0) outcome.cachedTokens = Math.max(0, outcome.cachedTokens - staged);
    }
    if (outcome.outcome !== "served") outcome.error = outcome.outcome;
  } catch (err) {
    const code = (err as { code?: string }).code ?? "transport-error";
    // A stream cut after its headers did get an answer (a failed one); no response at all is lost.
    if (outcome.outcome !== undefined) outcome.outcome = `failed-${code}`;
    outcome.error = outcome.outcome ?? code;
  }
  outcome.endAt = performance.now();
  return outcome;
}

async function readEvents<T>(
  body: AsyncIterable<Buffer>,
  outcome: T,
  onData: (data: string, outcome: T) => void,
): Promise<void> {
  let pending = "";
  for await (const chunk of body) {
    pending += chunk.toString("utf8");
    let nl = pending.indexOf("\n");
    while (nl >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line.startsWith("data:")) onData(line.slice(5).trim(), outcome);
      nl = pending.indexOf("\n");
    }
  }
}

/** The outcome of an error event in a started stream: `evicted`, else `failed-<code>`. */
export function streamErrorOutcome(code: string | number | undefined): string {
  const c = String(code ?? "stream-error");
  return c === "evicted" ? "evicted" : `failed-${c}`;
}

function onEvent(data: string, outcome: StreamOutcome): void {
  if (data === "[DONE]") return;
  // After the first token only usage and error events matter: skip parsing plain token chunks.
  if (!Number.isNaN(outcome.firstTokenAt) && !data.includes('"usage"') && !data.includes('"error"')) return;
  const json = JSON.parse(data) as ChunkJson;
  if (json.error) {
    // The router ends a started stream with an error event (eviction, upstream failure).
    outcome.outcome = streamErrorOutcome(json.error.code);
    return;
  }
  const choice = json.choices?.[0];
  if (choice && Number.isNaN(outcome.firstTokenAt) && (choice.text ?? choice.delta?.content ?? "") !== "") {
    outcome.firstTokenAt = performance.now();
  }
  if (json.usage) {
    outcome.promptTokens = json.usage.prompt_tokens ?? 0;
    outcome.completionTokens = json.usage.completion_tokens ?? 0;
    outcome.cachedTokens = json.usage.prompt_tokens_details?.cached_tokens ?? 0;
  }
}
