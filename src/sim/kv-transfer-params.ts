/**
 * `kv_transfer_params` of a request body, as vLLM's NixlConnector reads it: `do_remote_decode`
 * marks the prefill leg (the server keeps the KV for a remote decode), `do_remote_prefill` with
 * the `remote_*` fields marks the decode leg (pull the KV from the named prefill). Absent or null
 * params, or neither flag set, is an ordinary request.
 */
import { badRequest, type LlmdError } from "../api/errors.ts";

/** Where a prefill's KV lives, as the prefill leg returned it. */
export interface RemoteKv {
  engineId: string;
  blockIds: number[];
  host: string;
  port: number;
  /** vLLM's `remote_request_id`, when the prefill sent one. */
  requestId: string | undefined;
}

/** The leg a request is. */
export type TransferLeg = { kind: "none" } | { kind: "prefill" } | { kind: "decode"; remote: RemoteKv };

const PARAM = "kv_transfer_params";

/** Reads the leg from a parsed body; a malformed decode leg is a 400 naming the field. */
export function readTransferLeg(
  body: Record<string, unknown>,
): { ok: true; leg: TransferLeg } | { ok: false; error: LlmdError } {
  const params = body[PARAM];
  if (params === undefined || params === null) return { ok: true, leg: { kind: "none" } };
  if (typeof params !== "object" || Array.isArray(params))
    return { ok: false, error: badRequest(`${PARAM} must be an object`, PARAM) };
  const p = params as Record<string, unknown>;
  if (p.do_remote_decode === true) {
    if (body.stream === true)
      return {
        ok: false,
        error: badRequest(`${PARAM}.do_remote_decode is not supported with stream: true`, "stream"),
      };
    return { ok: true, leg: { kind: "prefill" } };
  }
  if (p.do_remote_prefill !== true) return { ok: true, leg: { kind: "none" } };
  return readRemote(p);
}

function readRemote(
  p: Record<string, unknown>,
): { ok: true; leg: TransferLeg } | { ok: false; error: LlmdError } {
  const field = (name: string, valid: boolean) =>
    valid
      ? null
      : badRequest(`${PARAM}.${name} is missing or invalid for do_remote_prefill`, `${PARAM}.${name}`);
  const ids = p.remote_block_ids;
  const error =
    field("remote_engine_id", typeof p.remote_engine_id === "string") ??
    field("remote_block_ids", Array.isArray(ids) && ids.every((b) => Number.isInteger(b))) ??
    field("remote_host", typeof p.remote_host === "string" && p.remote_host !== "") ??
    field("remote_port", Number.isInteger(p.remote_port)) ??
    field(
      "remote_request_id",
      p.remote_request_id === undefined ||
        p.remote_request_id === null ||
        typeof p.remote_request_id === "string",
    );
  if (error) return { ok: false, error };
  const remote: RemoteKv = {
    engineId: p.remote_engine_id as string,
    blockIds: ids as number[],
    host: p.remote_host as string,
    port: p.remote_port as number,
    requestId: (p.remote_request_id as string | null | undefined) ?? undefined,
  };
  return { ok: true, leg: { kind: "decode", remote } };
}
