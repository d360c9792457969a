/** The P/D flags of `llmd sidecar` and `llmd router`: how the prefill leg retries, and who runs the legs. */
import type { Command } from "commander";
import { LlmdError } from "../api/errors.ts";
import { DEFAULT_PREFILL_RETRY, type PrefillRetry } from "../disagg/prefill-leg.ts";
import type { PdOptions } from "../gateway/pd-dispatch.ts";
import { durationFlag, numberFlag } from "./flags.ts";

/** Parsed prefill-retry flags. */
export interface PrefillRetryFlags {
  prefillMaxRetries: string;
  prefillRetryBackoff: string;
}

/** Adds llm-d's `--prefill-max-retries` and `--prefill-retry-backoff` to a command. */
export function withPrefillRetryFlags(command: Command): Command {
  return command
    .option(
      "--prefill-max-retries <n>",
      "retries of a P/D prefill leg answered 502/503/504 or unreachable",
      String(DEFAULT_PREFILL_RETRY.maxRetries),
    )
    .option(
      "--prefill-retry-backoff <duration>",
      "wait between prefill retries (Go duration or seconds)",
      `${DEFAULT_PREFILL_RETRY.backoffMs}ms`,
    );
}

/** The prefill leg's retry from its flags (`invalid_option` for a malformed one). */
export function prefillRetryFrom(flags: PrefillRetryFlags): PrefillRetry {
  return {
    maxRetries: numberFlag("prefill-max-retries", flags.prefillMaxRetries, { integer: true }),
    backoffMs: durationFlag("prefill-retry-backoff", flags.prefillRetryBackoff),
  };
}

/** Parsed `llmd router` P/D flags. */
export interface PdFlags extends PrefillRetryFlags {
  pdLegs: string;
}

/** Adds `--pd-legs` and the prefill-retry flags to `llmd router`. */
export function withPdFlags(command: Command): Command {
  return withPrefillRetryFlags(
    command.option(
      "--pd-legs <who>",
      "who runs a P/D request's two legs: sidecar (the decode endpoint's llmd sidecar, as llm-d) or router",
      "sidecar",
    ),
  );
}

/** The router's P/D options from its flags. */
export function pdOptionsFrom(flags: PdFlags): PdOptions {
  if (flags.pdLegs !== "sidecar" && flags.pdLegs !== "router")
    throw new LlmdError(
      "invalid_option",
      `--pd-legs: expected sidecar or router, got ${JSON.stringify(flags.pdLegs)}`,
    );
  return { legs: flags.pdLegs, retry: prefillRetryFrom(flags) };
}
