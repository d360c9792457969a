/**
 * Headers plugins add at PreRequest for the gateway to send: a `Map<string, string>` in `ctx.state`
 * under `UPSTREAM_HEADERS_STATE_KEY` (the forwarded request) or `RESPONSE_HEADERS_STATE_KEY` (the
 * client response).
 */
import type { SchedulingContext } from "../../framework/types.ts";

/** Sets header `name` (lower-case) in the map under `stateKey`, creating the map on first use. */
export function setStateHeader(ctx: SchedulingContext, stateKey: string, name: string, value: string): void {
  let headers = ctx.state.get(stateKey) as Map<string, string> | undefined;
  if (!headers) ctx.state.set(stateKey, (headers = new Map()));
  headers.set(name, value);
}
