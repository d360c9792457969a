/**
 * Nesting bound for request bodies. JSON.parse accepts any depth, but a value nested a few
 * thousand levels deep overflows the stack of every recursive walk after it (JSON.stringify in an
 * error message, a re-serialised body), which was a 500 on the simulator and an unhandled
 * rejection that crashed the router. No OpenAI body comes near this limit.
 */
export const MAX_JSON_DEPTH = 256;

/** True when `value` nests arrays or objects deeper than `limit` levels (iterative: any depth is safe). */
export function nestedDeeperThan(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth > limit) return true;
    const children = Array.isArray(item) ? item : Object.values(item);
    for (const child of children) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}
