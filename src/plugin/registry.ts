/**
 * A registry instance holding plugin definitions by type (and deprecated aliases). Nothing registers
 * itself on import: hosts build a registry from a list (see `createBuiltinRegistry` in src/config).
 */
import type { PluginDefinition } from "./types.ts";

// biome-ignore lint/suspicious/noExplicitAny: definitions are heterogeneous in their parameter type
export type AnyPluginDefinition = PluginDefinition<any>;

export class PluginRegistry {
  private readonly byType = new Map<string, AnyPluginDefinition>();
  private readonly byAlias = new Map<string, AnyPluginDefinition>();

  constructor(definitions: Iterable<AnyPluginDefinition> = []) {
    for (const definition of definitions) this.register(definition);
  }

  /** Adds a definition; throws if its type or an alias is already taken (a programming error). */
  register(definition: AnyPluginDefinition): void {
    for (const name of [definition.type, ...(definition.aliases ?? [])]) {
      if (this.byType.has(name) || this.byAlias.has(name))
        throw new Error(`plugin type ${name} registered twice`);
    }
    this.byType.set(definition.type, definition);
    for (const alias of definition.aliases ?? []) this.byAlias.set(alias, definition);
  }

  /** The definition for a type or deprecated alias. */
  get(type: string): AnyPluginDefinition | undefined {
    return this.byType.get(type) ?? this.byAlias.get(type);
  }

  /** True when `type` names a deprecated alias rather than the canonical type. */
  isAlias(type: string): boolean {
    return this.byAlias.has(type);
  }

  /** All definitions sorted by type. */
  list(): AnyPluginDefinition[] {
    return [...this.byType.values()].sort((a, b) => a.type.localeCompare(b.type));
  }
}
