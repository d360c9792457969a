/**
 * The request headers of llm-d's P/D contract between the scheduler and the decode side: the
 * scheduler's PreRequest sets them on the request it sends to the decode endpoint, and the decode
 * side (`llmd sidecar`, or the router running both legs) reads them.
 */

/** The prefill endpoint(s) for the decode side, `host:port` (comma-separated when several). */
export const PREFILLER_HEADER = "x-prefiller-host-port";
/** The encode endpoints, `host:port,host:port`. */
export const ENCODERS_HEADER = "x-encoder-hosts-ports";
/** The data-parallel rank the request runs on, `host:port`. */
export const DATA_PARALLEL_HEADER = "x-data-parallel-host-port";

/**
 * Headers only the scheduler may set: a client that sends them would steer where its prefill runs
 * (or which rank serves it), so the router drops them from what clients send.
 */
export const SCHEDULER_HEADERS: ReadonlySet<string> = new Set([
  PREFILLER_HEADER,
  ENCODERS_HEADER,
  DATA_PARALLEL_HEADER,
]);
