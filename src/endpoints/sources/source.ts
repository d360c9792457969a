/** Where the pool learns which endpoints exist (a static list or a watched file). */
import type { EndpointMetadata } from "../endpoint.ts";

/** Receives the complete desired endpoint set every time it changes (never a delta). */
export type EndpointSetListener = (endpoints: readonly EndpointMetadata[]) => void;

/**
 * A discovery source. `start` delivers the first set through `onUpdate` before it resolves and
 * rejects with an `LlmdError` when no valid first set exists; later sets arrive whenever the
 * source changes. `stop` releases watchers; no update is delivered after it resolves.
 */
export interface EndpointSource {
  readonly kind: string;
  start(onUpdate: EndpointSetListener): Promise<void>;
  stop(): Promise<void>;
}
