/**
 * The decode side of a P/D transfer: pulls a prefill's KV through its side channel
 * (src/sim/kv-holds.ts) and prices the transfer with the engine's link model. A pull that fails
 * (prefill gone or unreachable, stale engine id, blocks no longer held, KV of another prompt, or an
 * injected `--kv-transfer-failure-rate` failure) says why, so the caller can fall back to a local
 * prefill or fail the request.
 */
import {
  type KvLink,
  type KvTransferSize,
  kvTransferMs,
  kvTransferSize,
  promptDigest,
  type ResolvedEngineOptions,
} from "../engine/index.ts";
import type { RemoteKv } from "./kv-transfer-params.ts";

/** Why a pull failed (the `reason` label of the failures counter). */
export type PullFailure = "unreachable" | "stale_engine" | "not_held" | "prompt_mismatch" | "injected";

/** Every {@link PullFailure}, for the metrics. */
export const PULL_FAILURES: readonly PullFailure[] = [
  "unreachable",
  "stale_engine",
  "not_held",
  "prompt_mismatch",
  "injected",
];

/**
 * A pull's outcome: the prompt tokens the prefill computed, the part that moves (those the decode
 * does not hold already) and the engine ms it takes, or why it failed.
 */
export type PullResult =
  | { ok: true; remoteTokens: number; size: KvTransferSize; transferMs: number }
  | { ok: false; reason: PullFailure; message: string };

/** How long a decode waits for the side channel to answer, wall ms. */
const PULL_TIMEOUT_MS = 10_000;

/** Pulls KV for one decode leg. */
export class KvPuller {
  constructor(
    private readonly options: ResolvedEngineOptions,
    private readonly link: KvLink,
    private readonly failureRatePercent: number,
    private readonly random: () => number,
  ) {}

  /**
   * Pulls `remote`'s KV for `prompt`, of which the decode's prefix cache holds `localTokens`
   * (vLLM moves only the rest). Any pull that reaches the prefill frees its hold there.
   */
  async pull(remote: RemoteKv, prompt: Uint32Array, localTokens: number): Promise<PullResult> {
    const answer = await this.request(remote);
    if (!answer.ok) return answer;
    const { num_tokens: tokens, prompt_digest: digest } = answer.body;
    if (this.failureRatePercent > 0 && this.random() * 100 < this.failureRatePercent)
      return { ok: false, reason: "injected", message: "injected KV transfer failure" };
    if (
      typeof tokens !== "number" ||
      tokens > prompt.length ||
      digest !== promptDigest(prompt.subarray(0, tokens))
    )
      return {
        ok: false,
        reason: "prompt_mismatch",
        message: "the pulled KV was computed for another prompt",
      };
    const size = kvTransferSize(this.options, Math.max(0, tokens - localTokens));
    return { ok: true, remoteTokens: tokens, size, transferMs: kvTransferMs(size, this.link) };
  }

  private async request(
    remote: RemoteKv,
  ): Promise<
    { ok: true; body: Record<string, unknown> } | { ok: false; reason: PullFailure; message: string }
  > {
    const host = remote.host.includes(":") ? `[${remote.host}]` : remote.host;
    const body = { engine_id: remote.engineId, block_ids: remote.blockIds, request_id: remote.requestId };
    let res: Response;
    try {
      res = await fetch(`http://${host}:${remote.port}/kv/pull`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(PULL_TIMEOUT_MS),
      });
    } catch (err) {
      const message = `prefill side channel ${remote.host}:${remote.port} unreachable: ${(err as Error).message}`;
      return { ok: false, reason: "unreachable", message };
    }
    const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status === 200) return { ok: true, body: json };
    const reason = res.status === 409 ? "stale_engine" : res.status === 404 ? "not_held" : "unreachable";
    return { ok: false, reason, message: String(json.error ?? `side channel answered ${res.status}`) };
  }
}
