/**
 * The slow-client bounds of `llmd router`, `llmd up` and `llmd sim`: header and body timeouts
 * (nginx's `client_header_timeout` / `client_body_timeout`, 60 s each) and the bytes of request
 * bodies the server holds at once.
 */
import type { Command } from "commander";
import { LlmdError } from "../api/errors.ts";
import { DEFAULT_MAX_INFLIGHT_BODY_BYTES } from "../api/request-body.ts";
import { durationFlag, numberFlag } from "./flags.ts";

/** Parsed edge flags. */
export interface EdgeFlags {
  headerTimeout: string;
  bodyTimeout: string;
  maxInflightBodyBytes: string;
}

/** The edge flags as [flags, description, default], shared by `llmd router`, `llmd up` and `llmd sim`. */
export const EDGE_FLAGS: readonly (readonly [flags: string, description: string, fallback: string])[] = [
  [
    "--header-timeout <duration>",
    "a client that has not sent its request headers by then gets 408 and is disconnected",
    "60s",
  ],
  [
    "--body-timeout <duration>",
    "a client that sends no body bytes for this long gets 408 and is disconnected",
    "60s",
  ],
  [
    "--max-inflight-body-bytes <n>",
    "request bodies the server holds in memory at once; a body past it gets 429",
    String(DEFAULT_MAX_INFLIGHT_BODY_BYTES),
  ],
];

/** Adds `--header-timeout`, `--body-timeout` and `--max-inflight-body-bytes` to a command. */
export function withEdgeFlags(command: Command): Command {
  for (const [flags, description, fallback] of EDGE_FLAGS) command.option(flags, description, fallback);
  return command;
}

/** A timeout flag in ms: a duration > 0. */
function timeoutFlag(name: string, value: string): number {
  const ms = durationFlag(name, value);
  if (ms > 0) return ms;
  throw new LlmdError("invalid_option", `--${name}: expected a duration > 0, got ${JSON.stringify(value)}`);
}

/** Gateway options from the edge flags (an `invalid_option` error for a malformed one). */
export function edgeOptions(flags: EdgeFlags): {
  headerTimeoutMs: number;
  bodyTimeoutMs: number;
  maxInflightBodyBytes: number;
} {
  return {
    headerTimeoutMs: timeoutFlag("header-timeout", flags.headerTimeout),
    bodyTimeoutMs: timeoutFlag("body-timeout", flags.bodyTimeout),
    maxInflightBodyBytes: numberFlag("max-inflight-body-bytes", flags.maxInflightBodyBytes, {
      min: 1,
      integer: true,
    }),
  };
}
