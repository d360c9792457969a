/**
 * One streaming OpenAI completions request over raw undici, timed client-side: first token
 * (first SSE event carrying text), end, and usage (`prompt_tokens_details.cached_tokens`).
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
  /** HTTP status or transport error code when it failed. */
  error?: string;
}

/** Body fields of the request. */
export interface StreamRequestBody {
  model: string;
  prompt: string;
  maxTokens: number;
}

interface ChunkJson {
  choices?: { text?: string; delta?: { content?: string } }[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
  };
}

/** Sends `POST {baseUrl}/v1/completions` with `stream: true`, `ignore_eos: true` and usage on. */
export async function streamCompletion(
  baseUrl: string,
  body: StreamRequestBody,
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
  const json = JSON.stringify({
    model: body.model,
    prompt: body.prompt,
    max_tokens: body.maxTokens,
    stream: true,
    ignore_eos: true,
    stream_options: { include_usage: true },
  });
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
      outcome.error = `http-${res.statusCode}`;
    } else await readEvents(res.body, outcome);
  } catch (err) {
    outcome.error = (err as { code?: string }).code ?? "transport-error";
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
  const json = JSON.parse(data) as ChunkJson;
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
