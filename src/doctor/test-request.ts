/**
 * One test request through both legs, with the bodies of llm-d's sidecar (src/disagg): the prefill
 * leg (one token, no stream, `kv_transfer_params.do_remote_decode`) to a prefill endpoint, a TCP
 * connection to the KV side channel it names (what the decode will pull from), then the decode
 * leg with the returned `kv_transfer_params` to a decode endpoint. Each leg is timed; where the
 * decode exposes the simulator's transfer counters, they tell whether it pulled the KV or fell
 * back to prefilling locally.
 */
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { decodeBody, type JsonBody, prefillBody, readPrefillAnswer } from "../disagg/legs.ts";
import { type Finding, finding } from "./findings.ts";
import { errorText } from "./inventory.ts";
import { counterSum, type EndpointProbe, metricsOf } from "./probe.ts";

const CHECK = "test-request";
const PATH = "/v1/chat/completions";

/** The client request the doctor sends (decode leg as is; prefill leg limited to one token). */
const testBody = (model: string) => ({
  model,
  messages: [{ role: "user", content: "llmd doctor: one request through the prefill and decode legs." }],
  max_tokens: 8,
});

/** One leg's outcome. */
export interface LegTiming {
  endpoint: string;
  status: number;
  ms: number;
}

/** The test request's findings and its legs' timings. */
export interface TestRequestResult {
  findings: Finding[];
  legs: { prefill?: LegTiming; decode?: LegTiming };
}

async function post(
  probe: EndpointProbe,
  body: JsonBody,
  requestId: string,
  timeoutMs: number,
): Promise<{ timing: LegTiming; body: JsonBody } | { error: string }> {
  const start = performance.now();
  try {
    const response = await fetch(`${probe.endpoint.baseUrl}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const answer = (await response.json().catch(() => ({}))) as JsonBody;
    const timing = { endpoint: probe.endpoint.key, status: response.status, ms: performance.now() - start };
    return { timing, body: answer };
  } catch (err) {
    return { error: errorText(err) };
  }
}

/** Opens and closes a TCP connection to `host:port`; undefined when it connects, else why not. */
function tcpProbe(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once("connect", () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve("timed out");
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

const errorMessage = (body: JsonBody) => {
  const error = body.error as { message?: unknown } | undefined;
  return typeof error?.message === "string" ? error.message : JSON.stringify(body).slice(0, 200);
};

/** The side channel a prefill's `kv_transfer_params` names, when it names one. */
function sideChannelOf(params: JsonBody): { host: string; port: number } | undefined {
  const { remote_host: host, remote_port: port } = params;
  return typeof host === "string" && typeof port === "number" ? { host, port } : undefined;
}

/** Transfers and local-prefill fallbacks a decode's metrics counted so far. */
async function transferCounts(decode: EndpointProbe, timeoutMs: number) {
  const text = await metricsOf(decode.endpoint, timeoutMs);
  if (text === undefined || decode.transfer === undefined) return undefined;
  return {
    transfers: counterSum(text, "llmd_sim_kv_transfers_total"),
    fallbacks: counterSum(text, "llmd_sim_kv_transfer_fallbacks_total"),
  };
}

/** Sends the test request from `prefill` to `decode`. */
export async function runTestRequest(
  prefill: EndpointProbe,
  decode: EndpointProbe,
  model: string,
  timeoutMs: number,
): Promise<TestRequestResult> {
  const requestId = `llmd-doctor-${randomUUID()}`;
  const body = testBody(model);
  const fail = (message: string, fix: string, legs: TestRequestResult["legs"] = {}) => ({
    findings: [finding(CHECK, "fail", message, fix)],
    legs,
  });
  const prefillLeg = await post(prefill, prefillBody(PATH, body), requestId, timeoutMs);
  const p = prefill.endpoint.key;
  if ("error" in prefillLeg)
    return fail(`prefill leg to ${p} failed: ${prefillLeg.error}`, "check the prefill server's logs");
  const legs: TestRequestResult["legs"] = { prefill: prefillLeg.timing };
  if (prefillLeg.timing.status !== 200)
    return fail(
      `prefill leg to ${p} answered ${prefillLeg.timing.status}: ${errorMessage(prefillLeg.body)}`,
      "check that it is a prefill server (kv_role kv_producer or kv_both) serving the model",
      legs,
    );
  const params = readPrefillAnswer(prefillLeg.body).kvTransferParams;
  if (!params)
    return fail(
      `prefill ${p} returned no kv_transfer_params: it computed the prompt but offers no KV to pull`,
      `start it with --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'`,
      legs,
    );
  const channel = sideChannelOf(params);
  const unreachable = channel && (await tcpProbe(channel.host, channel.port, timeoutMs));
  if (channel && unreachable)
    return fail(
      `the KV side channel ${channel.host}:${channel.port} that ${p} names is unreachable from this host: ${unreachable}`,
      "set the side-channel host (VLLM_NIXL_SIDE_CHANNEL_HOST, --kv-side-channel-host) to an address decode pods can reach",
      legs,
    );
  return decodeLeg(decode, decodeBody(body, params), requestId, timeoutMs, legs);
}

async function decodeLeg(
  decode: EndpointProbe,
  body: JsonBody,
  requestId: string,
  timeoutMs: number,
  legs: TestRequestResult["legs"],
): Promise<TestRequestResult> {
  const d = decode.endpoint.key;
  const before = await transferCounts(decode, timeoutMs);
  const answer = await post(decode, body, requestId, timeoutMs);
  if ("error" in answer)
    return {
      findings: [
        finding(
          CHECK,
          "fail",
          `decode leg to ${d} failed: ${answer.error}`,
          "check the decode server's logs",
        ),
      ],
      legs,
    };
  legs.decode = answer.timing;
  if (answer.timing.status !== 200)
    return {
      findings: [
        finding(
          CHECK,
          "fail",
          `decode leg to ${d} answered ${answer.timing.status}: ${errorMessage(answer.body)}`,
          "check that it is a decode server (kv_role kv_consumer or kv_both) with the prefill's connector",
        ),
      ],
      legs,
    };
  const after = await transferCounts(decode, timeoutMs);
  const timing = `prefill leg ${legs.prefill!.ms.toFixed(1)} ms on ${legs.prefill!.endpoint}, decode leg ${answer.timing.ms.toFixed(1)} ms on ${d}`;
  if (before && after && after.fallbacks > before.fallbacks)
    return {
      findings: [
        finding(
          CHECK,
          "fail",
          `${d} could not pull the prefill's KV and prefilled locally (${timing})`,
          "check the decode's llmd_sim_kv_transfer_failures_total reasons: stale engine id, unreachable side channel",
        ),
      ],
      legs,
    };
  const pulled = before && after && after.transfers > before.transfers ? "; the decode pulled the KV" : "";
  return { findings: [finding(CHECK, "pass", `both legs served: ${timing}${pulled}`)], legs };
}
