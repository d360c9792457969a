/**
 * Reading one numeric endpoint attribute by llm-d's `{attribute, producer}` pair, for
 * `endpoint-attribute-filter` and `endpoint-attribute-scorer`. Without a producer (or with the core
 * metrics extractor's type, or `""`) the attribute is a `core-metrics-extractor` custom metric, which
 * llmd stores under its `attributeKey` as is; a named producer (e.g. `dcgm-extractor`) publishes
 * under `attributeKey(attribute, producer)`.
 */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { attributeKey } from "../../framework/data-keys.ts";

/** The producer llm-d assumes when none is named; its custom metrics are keyed by name alone. */
const CORE_METRICS_EXTRACTOR = "core-metrics-extractor";

/** The `Endpoint.attributes` key of `attribute` as published by `producer`. */
export function endpointAttributeKey(attribute: string, producer: string | undefined): string {
  if (producer === undefined || producer === "" || producer === CORE_METRICS_EXTRACTOR) return attribute;
  return attributeKey(attribute, producer);
}

/** The attribute's value on `endpoint`, or undefined when it is missing or not a finite number. */
export function readNumericAttribute(endpoint: Endpoint, key: string): number | undefined {
  const value = endpoint.attributes.get(key);
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
