/**
 * The P/D legs of a generation request (`kv_transfer_params`, src/sim/kv-transfer-params.ts) on a
 * server with `--kv-transfer-config`. A prefill leg is served as usual and its KV held when it
 * finishes (src/sim/handlers/run.ts). A decode leg first pulls the prefill's KV, waits the
 * transfer time, then runs with those prompt tokens already computed; when the pull fails it
 * recomputes the prefill locally (`kv_load_failure_policy: recompute`, counted as a fallback) or
 * answers 503 `kv_transfer_failed` (`fail`). Without `--kv-transfer-config` the params are ignored,
 * as vLLM ignores them without a connector.
 */
import type { ServerResponse } from "node:http";
import { LlmdError } from "../../api/errors.ts";
import type { SimContext } from "../context.ts";
import { sendError } from "../http.ts";
import { readTransferLeg, type TransferLeg } from "../kv-transfer-params.ts";
import type { Admitted } from "./run.ts";

/** The leg of `body`, or the 400 to answer; "none" without `--kv-transfer-config`. */
export function transferLegOf(
  ctx: SimContext,
  body: Record<string, unknown>,
): ReturnType<typeof readTransferLeg> {
  if (!ctx.kvTransfer) return { ok: true, leg: { kind: "none" } };
  const read = readTransferLeg(body);
  if (!read.ok) return read;
  const refusal = ctx.kvTransfer.refusal(read.leg);
  return refusal ? { ok: false, error: refusal } : read;
}

/**
 * Readies an admitted request for its leg: a prefill leg holds its KV on finishing; a decode leg
 * pulls and transfers first. Resolves with the job to run, or null when the request was answered
 * (the pull failed under the `fail` policy) or its client left meanwhile.
 */
export async function prepareLeg(
  ctx: SimContext,
  res: ServerResponse,
  leg: TransferLeg,
  job: Admitted,
): Promise<Admitted | null> {
  const agent = ctx.kvTransfer;
  if (!agent || leg.kind === "none") return job;
  if (leg.kind === "prefill") return { ...job, holdKv: true };
  const local = ctx.driver.engine.cachedPrefixTokens({
    promptTokens: job.promptIds,
    lora: job.lora,
    cacheSalt: job.request.cacheSalt,
  });
  const pulled = await agent.pull(leg.remote, job.promptIds, local);
  if (res.destroyed) return null;
  if (!pulled.ok) {
    if (agent.transfer.failurePolicy === "fail") {
      sendError(res, new LlmdError("kv_transfer_failed", `KV transfer failed: ${pulled.message}`));
      return null;
    }
    agent.fellBack();
    return job;
  }
  await new Promise((resolve) => setTimeout(resolve, pulled.transferMs / ctx.config.speed));
  return res.destroyed ? null : { ...job, remoteKvTokens: pulled.remoteTokens };
}
