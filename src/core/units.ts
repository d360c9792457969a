/**
 * Parsers for the two Kubernetes-style value formats flow-control config uses: resource Quantities
 * ("10Gi", "1k", "500") and Go durations ("60s", "1m30s", "250ms"). Both return `undefined` on
 * malformed input so the schema can report the offending path.
 */
import { z } from "zod";

const QUANTITY = /^([+]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$/;

const QUANTITY_SUFFIX: Readonly<Record<string, number>> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/**
 * Parses a non-negative k8s Quantity (or a plain number) into an integer count, rounding up as
 * Kubernetes does. Returns undefined when malformed or negative.
 */
export function parseQuantity(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? Math.ceil(value) : undefined;
  const match = QUANTITY.exec(value.trim());
  if (!match) return undefined;
  const scaled = Number(match[1]) * (QUANTITY_SUFFIX[match[2] ?? ""] ?? 1);
  return Number.isFinite(scaled) ? Math.ceil(scaled) : undefined;
}

const DURATION_PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;

const DURATION_UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Parses a non-negative Go duration ("60s", "1m30s", "0") into milliseconds. A plain number is
 * taken as seconds. Returns undefined when malformed.
 */
export function parseDurationMs(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  const text = value.trim();
  if (text === "0") return 0;
  if (text === "") return undefined;
  DURATION_PART.lastIndex = 0;
  let total = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const match = DURATION_PART.exec(text);
    if (!match) return undefined;
    total += Number(match[1]) * (DURATION_UNIT_MS[match[2] ?? ""] ?? Number.NaN);
  }
  return Number.isFinite(total) ? total : undefined;
}

/** A k8s Quantity ("10Gi", "1k") or a plain number, parsed to a non-negative integer count. */
export const quantitySchema = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const parsed = parseQuantity(value);
  if (parsed !== undefined) return parsed;
  ctx.addIssue({
    code: "custom",
    message: `expected a non-negative Quantity like "10Gi" or "1k", got ${JSON.stringify(value)}`,
  });
  return z.NEVER;
});

/** A Go duration ("60s") or a number of seconds, parsed to milliseconds. */
export const durationMsSchema = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const parsed = parseDurationMs(value);
  if (parsed !== undefined) return parsed;
  ctx.addIssue({ code: "custom", message: `expected a duration like "60s", got ${JSON.stringify(value)}` });
  return z.NEVER;
});
