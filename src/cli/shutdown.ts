/**
 * Signal handling of the long-running commands (`llmd router`, `llmd sim`, `llmd up`): the first
 * SIGINT or SIGTERM starts a graceful drain and the process exits 0 when it is done; a second
 * signal exits at once (status 128 + the signal's number, as a shell reports a killed process).
 */
import type { Command } from "commander";
import { durationFlag } from "./flags.ts";

/** llm-d's `--drain-timeout` default. */
export const DEFAULT_DRAIN_TIMEOUT = "30s";

const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 } as const;

/** Adds `--drain-timeout <duration>` to a command. */
export function withDrainTimeout(command: Command): Command {
  return command.option(
    "--drain-timeout <duration>",
    "on SIGTERM/SIGINT, how long accepted requests may run before the process exits (Go duration or seconds)",
    DEFAULT_DRAIN_TIMEOUT,
  );
}

/** `--drain-timeout` in milliseconds (an `invalid_option` error when malformed). */
export function drainTimeoutMs(flags: { drainTimeout: string }): number {
  return durationFlag("drain-timeout", flags.drainTimeout);
}

/**
 * Runs `drain` on the first SIGINT/SIGTERM and exits 0 once it settles (1 if it threw); a second
 * signal exits at once. `name` prefixes the lines written to stderr.
 */
export function drainOnSignals(name: string, drain: () => Promise<void>): void {
  let draining = false;
  const onSignal = (signal: keyof typeof SIGNAL_NUMBERS) => {
    if (draining) {
      process.stderr.write(`${name}: ${signal} again, exiting now\n`);
      process.exit(128 + SIGNAL_NUMBERS[signal]);
    }
    draining = true;
    process.stderr.write(`${name}: ${signal}, draining (${signal} again exits at once)\n`);
    drain().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`${name}: drain failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
