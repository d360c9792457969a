/**
 * `llmd plugins [--json]`: every registered plugin type with its stability, the extension points
 * it implements and its parameters (from the zod schema), then the llm-d types llmd does not
 * implement, grouped by what they lack.
 */
import type { Command } from "commander";
import { z } from "zod";
import { PLANNED_PLUGINS } from "../../config/planned-plugins.ts";
import { createBuiltinRegistry } from "../../config/registry.ts";
import { ManualClock } from "../../core/clock.ts";
import { pluginKinds } from "../../scheduler/framework/guards.ts";
import type { AnyPluginDefinition } from "../../plugin/registry.ts";
import { defaultTokenizer } from "../../tokenizer/tokenizer.ts";

interface JsonSchemaProperty {
  type?: string | string[];
  default?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchemaProperty[];
}

/** What `llmd plugins --json` prints for one plugin. */
interface PluginInfo {
  type: string;
  stability: string;
  kinds: string[];
  description: string;
  aliases: readonly string[];
  parameters: Record<string, unknown>;
  /** The parameters an empty `parameters:` block gets (omitted when some are required). */
  defaults?: Record<string, unknown>;
}

const SUFFIX_KINDS: Readonly<Record<string, string>> = {
  handler: "profile-handler",
  filter: "filter",
  scorer: "scorer",
  picker: "picker",
  producer: "data-producer",
  policy: "flow-control-policy",
  detector: "saturation-detector",
  admitter: "admitter",
  decider: "decider",
  screener: "screener",
};

/** Extension points of a definition: llm-d's naming convention plus what a default instance implements. */
function kindsOf(definition: AnyPluginDefinition): string[] {
  const guessed = SUFFIX_KINDS[definition.type.split("-").at(-1) ?? ""];
  const kinds = new Set(guessed ? [guessed] : []);
  const parsed = definition.parameters.safeParse({});
  if (parsed.success) {
    const env = {
      name: definition.type,
      clock: new ManualClock(),
      tokenizer: defaultTokenizer,
      lookup: () => undefined,
    };
    try {
      for (const kind of pluginKinds(definition.create(parsed.data, env))) kinds.add(kind);
    } catch {
      // A factory that needs other plugins keeps the name-based guess.
    }
  }
  return [...kinds];
}

function infoOf(definition: AnyPluginDefinition): PluginInfo {
  const parsed = definition.parameters.safeParse({});
  return {
    type: definition.type,
    stability: definition.stability,
    kinds: kindsOf(definition),
    description: definition.description,
    aliases: definition.aliases ?? [],
    parameters: z.toJSONSchema(definition.parameters, { io: "input", unrepresentable: "any" }) as Record<
      string,
      unknown
    >,
    defaults: parsed.success ? (parsed.data as Record<string, unknown>) : undefined,
  };
}

/**
 * `name=default` (or `name:type`) for each top-level parameter. `defaults` is the definition's
 * parse of `{}`: a default behind a transform (a port given as number or string) is missing from
 * the JSON Schema but not from the parse.
 */
function summariseParameters(schema: Record<string, unknown>, defaults: Record<string, unknown>): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchemaProperty>;
  const parts = Object.entries(properties).map(([name, p]) => {
    const value = p.default ?? defaults[name];
    return value !== undefined ? `${name}=${JSON.stringify(value)}` : `${name}:${typeOf(p)}`;
  });
  return parts.length > 0 ? parts.join(" ") : "—";
}

function typeOf(p: JsonSchemaProperty): string {
  if (p.enum) return p.enum.join("|");
  if (p.anyOf) return p.anyOf.map(typeOf).join(",");
  return String(p.type ?? "object");
}

function printTable(infos: PluginInfo[]): void {
  const rows = infos.map((i) => [
    i.type,
    i.stability,
    i.kinds.join(","),
    summariseParameters(i.parameters, i.defaults ?? {}),
  ]);
  const header = ["TYPE", "STABILITY", "KINDS", "PARAMETERS (default)"];
  const widths = header.slice(0, 3).map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  for (const row of [header, ...rows]) {
    console.log(row.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]!) : cell)).join("  "));
  }
}

function plannedByPlan(registered: Set<string>): Map<string, string[]> {
  const byPlan = new Map<string, string[]>();
  for (const [type, plan] of PLANNED_PLUGINS) {
    if (registered.has(type)) continue;
    byPlan.set(plan, [...(byPlan.get(plan) ?? []), type]);
  }
  return byPlan;
}

/** Registers `llmd plugins`. */
export function registerPlugins(program: Command): void {
  program
    .command("plugins")
    .description("list registered plugins, their parameters, and the llm-d types not implemented")
    .option("--json", "print JSON (full parameter schemas)")
    .action((options: { json?: boolean }) => {
      const infos = createBuiltinRegistry().list().map(infoOf);
      const planned = plannedByPlan(new Set(infos.map((i) => i.type)));
      if (options.json) {
        console.log(JSON.stringify({ plugins: infos, planned: Object.fromEntries(planned) }, null, 2));
        return;
      }
      printTable(infos);
      console.log("\nllm-d plugin types not implemented (a config using one fails naming it):");
      for (const [plan, types] of planned) console.log(`  ${plan}:\n    ${types.join(", ")}`);
      console.log("\nalpha plugins need --allow-experimental-plugins.");
    });
}
