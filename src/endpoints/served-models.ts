/** Reads an OpenAI `/v1/models` listing (models-data-source): the ids an endpoint serves, LoRAs included. */

/**
 * Model ids from a `/v1/models` body (`{"data":[{"id":…},…]}`), sorted and de-duplicated;
 * undefined when the body is not such a listing.
 */
export function parseServedModels(body: string): string[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const data = (parsed as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  const ids = new Set<string>();
  for (const entry of data) {
    const id = (entry as { id?: unknown } | null)?.id;
    if (typeof id === "string" && id !== "") ids.add(id);
  }
  return [...ids].sort();
}

/** True when two sorted lists hold the same ids. */
export function sameModels(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  return a.every((id, i) => id === b[i]);
}
