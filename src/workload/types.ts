/**
 * Workload contract shared by the fleet simulator (virtual time) and the live HTTP load generator
 * (`llmd bench`): a stream of open-loop arrivals plus closed-loop follow-ups caused by completions.
 */

/**
 * A run of prompt tokens whose content is a pure function of `(ns, id)` (see synthetic-prompt.ts).
 * Two prompts share exactly the leading segments they have in common.
 */
export interface Segment {
  /** Namespace of `id` (e.g. `mc`, `weka:trace_0001`, `weka:shared`). */
  ns: string;
  id: number;
  /** Length in tokens (> 0); a shorter segment is a prefix of the longer one with the same key. */
  tokens: number;
}

/** One request of a workload. */
export interface WorkloadRequest {
  /** Unique within a run. */
  id: string;
  /** Conversation / agent session, when the workload has one (sent as `x-session-id`). */
  sessionId?: string;
  /**
   * The Responses chain this request continues, when the workload has one: an agent's turns share
   * one (a Claude Code session's main agent, each of its sub-agents).
   */
  chainId?: string;
  /** Prompt content, in order. */
  segments: Segment[];
  /** Σ segments' tokens. */
  inputTokens: number;
  /** Tokens to generate (EOS ignored). */
  outputTokens: number;
  /** Traffic class for per-class reports (e.g. `main`, `sub-agent`, `code`, `conv`). */
  kind?: string;
  /** InferenceObjective name (`x-llm-d-inference-objective`); the scenario maps it to a priority. */
  objective?: string;
  /** Flow-control fairness id (`x-llm-d-inference-fairness-id`): tenant or agent program. */
  fairnessId?: string;
}

/** A request and when it is issued, in milliseconds of workload time (0 = run start). */
export interface Arrival {
  atMs: number;
  request: WorkloadRequest;
}

/**
 * A request source. Open-loop workloads return arrivals from `nextArrival` in time order;
 * closed-loop workloads start their streams there and continue them from `onComplete`.
 */
export interface Workload {
  readonly name: string;
  /** Next arrival not caused by a completion (non-decreasing `atMs`), or undefined when none remain. */
  nextArrival(): Arrival | undefined;
  /** A request ended at `endMs` (ok = served, false = rejected/failed); returns arrivals it causes. */
  onComplete(request: WorkloadRequest, endMs: number, ok: boolean): Arrival[];
}

/** Builds segments for `tokens` of content cut into blocks of `blockTokens` under one namespace. */
export function blockSegments(ns: string, firstId: number, tokens: number, blockTokens: number): Segment[] {
  const out: Segment[] = [];
  for (let id = firstId, left = tokens; left > 0; id++, left -= blockTokens) {
    out.push({ ns, id, tokens: Math.min(blockTokens, left) });
  }
  return out;
}

/** A request from segments (inputTokens computed). */
export function makeRequest(
  id: string,
  segments: Segment[],
  outputTokens: number,
  extra: Pick<WorkloadRequest, "sessionId" | "kind" | "objective" | "fairnessId"> = {},
): WorkloadRequest {
  let inputTokens = 0;
  for (const s of segments) inputTokens += s.tokens;
  return { id, segments, inputTokens, outputTokens: Math.max(1, outputTokens), ...extra };
}
