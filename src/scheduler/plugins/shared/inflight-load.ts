/**
 * The in-flight load snapshot `inflight-load-producer` publishes per request and load
 * scorers/filters read: stored in `ctx.state` under `attributeKey(IN_FLIGHT_LOAD, producerName)`.
 */
import { attributeKey, IN_FLIGHT_LOAD, type InFlightLoad } from "../../framework/data-keys.ts";

/** `InFlightLoad` of one endpoint plus this request's own uncached prompt tokens there. */
export interface EndpointLoad extends InFlightLoad {
  /** Prompt tokens this request would still prefill on this endpoint (after its cached prefix). */
  requestUncachedTokens: number;
}

/** Per-endpoint load when the request's producers ran, keyed by endpoint key. */
export type InFlightLoadSnapshot = ReadonlyMap<string, EndpointLoad>;

const IDLE: EndpointLoad = { tokens: 0, requests: 0, requestUncachedTokens: 0 };

/** State key of the snapshot published by producer instance `producerName`. */
export function inFlightStateKey(producerName: string): string {
  return attributeKey(IN_FLIGHT_LOAD, producerName);
}

/** Load of `endpointKey` in the snapshot under `stateKey`; zero load if absent. */
export function readEndpointLoad(
  state: ReadonlyMap<string, unknown>,
  stateKey: string,
  endpointKey: string,
): EndpointLoad {
  const snapshot = state.get(stateKey);
  if (!(snapshot instanceof Map)) return IDLE;
  return (snapshot as InFlightLoadSnapshot).get(endpointKey) ?? IDLE;
}
