/**
 * A P/D stack on loopback for the two-leg tests: prefill and decode simulators with NixlConnector
 * KV transfer, inspection proxies in front of them (test/disagg/inspection-proxy.ts), and a
 * router with llm-d's `pd-epp-config.yaml` over role-labelled endpoints; with `legs: "sidecar"`
 * the decode endpoint is an `llmd sidecar` in front of the decode simulator.
 */
import { join } from "node:path";
import { ROLE_LABEL } from "../../src/endpoints/endpoint.ts";
import type { EndpointMetadata } from "../../src/endpoints/endpoint.ts";
import type { PrefillRetry } from "../../src/disagg/prefill-leg.ts";
import type { Router } from "../../src/gateway/router.ts";
import { type Sidecar, type SidecarOptions, startSidecar } from "../../src/gateway/sidecar.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { eventually, routerFor, startSims } from "../router/harness.ts";
import { type InspectionProxy, startInspectionProxy } from "./inspection-proxy.ts";

export const PD_CONFIG = {
  path: join(import.meta.dirname, "../../../shared/data/llm-d-configs/pd-epp-config.yaml"),
};
export const NIXL = { kv_connector: "NixlConnector", kv_role: "kv_both" };

/** `role` endpoint named `name` at `url`. */
export function roleEndpoint(name: string, role: string, url: string): EndpointMetadata {
  const { hostname, port } = new URL(url);
  return {
    key: `default/${name}`,
    name,
    namespace: "default",
    address: hostname,
    port: Number(port),
    labels: { [ROLE_LABEL]: role },
  };
}

/** One NixlConnector simulator per engine id. */
export function nixlSims(engineIds: readonly string[]): Promise<SimServer[]> {
  return Promise.all(
    engineIds.map(async (id) => {
      const [sim] = await startSims(1, { "kv-transfer-config": JSON.stringify({ ...NIXL, engine_id: id }) });
      return sim as SimServer;
    }),
  );
}

export interface PdStack {
  router: Router;
  prefill: SimServer;
  decode: SimServer;
  /** In front of the prefill simulator (the prefill endpoint the router knows). */
  prefillProxy: InspectionProxy;
  /** In front of the decode simulator (what the sidecar, or the router, sends decode legs to). */
  decodeProxy: InspectionProxy;
  sidecar: Sidecar | undefined;
  /** The router's log lines. */
  log: string[];
  close(): Promise<void>;
}

/** Starts a stack; `legs` says who runs the two legs. */
export async function startPdStack(
  legs: "sidecar" | "router",
  retry: PrefillRetry = { maxRetries: 0, backoffMs: 10 },
  sidecarOptions: Partial<SidecarOptions> = {},
): Promise<PdStack> {
  const [prefill, decode] = (await nixlSims(["prefill-0", "decode-0"])) as [SimServer, SimServer];
  const prefillProxy = await startInspectionProxy(prefill.url);
  const decodeProxy = await startInspectionProxy(decode.url);
  const sidecar =
    legs === "sidecar"
      ? await startSidecar({ port: 0, modelServerPort: decodeProxy.port, retry, ...sidecarOptions })
      : undefined;
  const decodeUrl = sidecar?.urls[0] ?? decodeProxy.url;
  const log: string[] = [];
  const router = await routerFor([], PD_CONFIG, {
    endpoints: [
      roleEndpoint("prefill-0", "prefill", prefillProxy.url),
      roleEndpoint("decode-0", "decode", decodeUrl),
    ],
    pd: { legs, retry },
    log: (_level, message) => log.push(message),
  });
  await eventually(() => router.pool.candidates().length === 2);
  return {
    router,
    prefill,
    decode,
    prefillProxy,
    decodeProxy,
    sidecar,
    log,
    close: async () => {
      await router.close();
      await sidecar?.close();
      await Promise.all([prefillProxy.close(), decodeProxy.close(), prefill.close(), decode.close()]);
    },
  };
}
