import { z } from "zod";

/**
 * A flag that takes vLLM's JSON text (`--kv-events-config '{…}'`) or, from a config file, the same
 * mapping: JSON text is parsed (a parse error is an issue naming it), then `object` validates it.
 */
export function jsonOrMapping<T extends z.ZodType>(object: T) {
  return z
    .union([z.string(), z.record(z.string(), z.unknown())])
    .transform((v, ctx) => {
      if (typeof v !== "string") return v;
      try {
        return JSON.parse(v) as unknown;
      } catch (err) {
        ctx.addIssue({ code: "custom", message: `not JSON: ${(err as Error).message}` });
        return z.NEVER;
      }
    })
    .pipe(object);
}
