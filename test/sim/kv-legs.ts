/** What the P/D transfer tests send and read: NixlConnector's config and the legs' bodies (§5.3). */

/** `--kv-transfer-config` of a NixlConnector server of both roles. */
export const NIXL = { kv_connector: "NixlConnector", kv_role: "kv_both" };

/** The fields of a leg's answer the tests read. */
export interface LegReply {
  object: string;
  kv_transfer_params: {
    do_remote_prefill: boolean;
    do_remote_decode: boolean;
    remote_engine_id: string;
    remote_block_ids: number[];
    remote_host: string;
    remote_port: number;
    tp_size: number;
  };
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
  };
  error: { code: string; param: string };
}

/** POSTs `body` as JSON to `url + path`; the status and the parsed answer. */
export async function postLeg(
  url: string,
  path: string,
  body: unknown,
): Promise<{ status: number; json: LegReply }> {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as LegReply };
}
