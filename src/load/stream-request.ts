/**
 * One streaming OpenAI completions request over raw undici, timed client-side: first token
 * (first SSE event carrying text), end, usage (`prompt_tokens_details.cached_tokens`), and how it
 * ended, named as the fleet simulator names outcomes.
 */
import { type Dispatcher, request } from "undici";

/** What the client saw, times in ms of `performance.now()`. */
export interface StreamOutcome {
  /** When the serialized request was handed to undici: the client's TTFT clock starts here. */
  sentAt: number;
  firstTokenAt: number;
  endAt: number;
  completionTokens: number;
  promptTokens: number;
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
export async function streamCompletion(
  baseUrl: string,
  json: string,
  headers: Record<string, string>,
  dispatcher?: Dispatcher,
): Promise<StreamOutcome> {
  const outcome: StreamOutcome = {
    sentAt: Number.NaN,
    firstTokenAt: Number.NaN,
    endAt: Number.NaN,
    completionTokens: 0,
    promptTokens: 0,
    cachedTokens: 0,
  };
  try {
    outcome.sentAt = performance.now();
    const res = await request(`${baseUrl.replace(/\/$/, "")}/v1/completions`, {
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
      await readEvents(res.body, outcome);
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

async function readEvents(body: AsyncIterable<Buffer>, outcome: StreamOutcome): Promise<void> {
  let pending = "";
  for await (const chunk of body) {
    pending += chunk.toString("utf8");
    let nl = pending.indexOf("\n");
    while (nl >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line.startsWith("data:")) onEvent(line.slice(5).trim(), outcome);
      nl = pending.indexOf("\n");
    }
  }
}

function onEvent(data: string, outcome: StreamOutcome): void {
  if (data === "[DONE]") return;
  // After the first token only usage and error events matter: skip parsing plain token chunks.
  if (!Number.isNaN(outcome.firstTokenAt) && !data.includes('"usage"') && !data.includes('"error"')) return;
  const json = JSON.parse(data) as ChunkJson;
  if (json.error) {
    // The router ends a started stream with an error event (eviction, upstream failure).
    const code = String(json.error.code ?? "stream-error");
    outcome.outcome = code === "evicted" ? "evicted" : `failed-${code}`;
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
