/**
 * The in-flight load data `inflight-load-producer` publishes and load scorers/filters read.
 * The producer stores an `InFlightLoadSnapshot` in `ctx.state` under its instance name.
 */

/** llm-d's `InFlightLoad` for one endpoint, as seen by this router replica. */
export interface InFlightLoad {
  /** Uncached prompt tokens (plus estimated output tokens if configured) dispatched, not yet released. */
  tokens: number;
  /** Requests dispatched and not yet completed. */
  requests: number;
  /** This request's own uncached prompt tokens if it went to this endpoint. */
  requestUncachedTokens: number;
}

/** Per-endpoint load taken when the request's producers ran, keyed by endpoint key. */
export type InFlightLoadSnapshot = ReadonlyMap<string, InFlightLoad>;

/** Default producer instance name consumers read from. */
export const DEFAULT_INFLIGHT_PRODUCER = "inflight-load-producer";

const IDLE: InFlightLoad = { tokens: 0, requests: 0, requestUncachedTokens: 0 };

/** Load of `endpointKey` in the snapshot `producerName` stored; zero load if absent. */
export function readInFlightLoad(
  state: ReadonlyMap<string, unknown>,
  producerName: string,
  endpointKey: string,
): InFlightLoad {
  const snapshot = state.get(producerName);
  if (!(snapshot instanceof Map)) return IDLE;
  return (snapshot as InFlightLoadSnapshot).get(endpointKey) ?? IDLE;
}
