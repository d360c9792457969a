/**
 * Kind-neutral plugin contracts: what every plugin instance is, how a plugin type declares itself
 * (metadata, parameter schema, factory) and what its factory may use. The scheduler, flow control
 * and the endpoint data layer each add their own extension points on top.
 */
import type { z } from "zod";
import type { Clock } from "../core/clock.ts";
import type { Tokenizer } from "../tokenizer/tokenizer.ts";

/** Base of every plugin instance. */
export interface Plugin {
  /** Registered type name, e.g. `prefix-cache-scorer`. */
  readonly type: string;
  /** Instance name from the config (defaults to the type). */
  readonly name: string;
}

/** Plugin maturity, as llm-d labels it. Alpha plugins need `--allow-experimental-plugins`. */
export type Stability = "ga" | "beta" | "alpha" | "deprecated";

/** What a plugin factory may use. */
export interface PluginEnvironment {
  /** Instance name. */
  name: string;
  clock: Clock;
  tokenizer: Tokenizer;
  /** Another configured plugin by instance name (for references such as `prefixMatchInfoProducerName`). */
  lookup(name: string): Plugin | undefined;
  /** Uniform [0,1) source for randomised plugins; hosts pass a seeded one for determinism (default Math.random). */
  random?: () => number;
}

/** A registrable plugin type: metadata, parameter schema and factory. */
export interface PluginDefinition<P = unknown> {
  type: string;
  stability: Stability;
  /** One line for `llmd plugins`. */
  description: string;
  /** Validates `parameters` (unknown fields rejected, defaults filled). */
  parameters: z.ZodType<P>;
  create(params: P, env: PluginEnvironment): Plugin;
  /** Deprecated type names also accepted for this definition (e.g. `tokenizer` for `token-producer`). */
  aliases?: readonly string[];
  /** Data keys (framework/data-keys.ts) this plugin writes; orders producers and satisfies consumers. */
  produces?: readonly string[];
  /** Data keys this plugin reads; the config loader auto-adds the default producer of a key nobody produces. */
  consumes?: readonly string[];
  /** Data keys this plugin reads when a configured producer writes them, and does without otherwise. */
  uses?: readonly string[];
}
