/**
 * Reference phase of config loading: every `pluginRef` outside scheduling profiles (flow control,
 * data layer, request parsers) must name a configured plugin. Flow control's default policies and
 * detectors, when registered, are created with default parameters if the config does not list them.
 */
import {
  DEFAULT_FAIRNESS_POLICY,
  DEFAULT_ORDERING_POLICY,
  DEFAULT_SATURATION_DETECTOR,
  DEFAULT_USAGE_LIMIT_POLICY,
  type FlowControlConfig,
} from "../flow-control/config.ts";
import type { InstantiateOptions, PluginSet } from "./instantiate.ts";
import type { ConfigIssue } from "./issues.ts";
import type { EndpointPickerConfigDocument } from "./schema.ts";

const FLOW_CONTROL_DEFAULTS = new Set([
  DEFAULT_FAIRNESS_POLICY,
  DEFAULT_ORDERING_POLICY,
  DEFAULT_SATURATION_DETECTOR,
  DEFAULT_USAGE_LIMIT_POLICY,
]);

function flowControlRefs(fc: FlowControlConfig): [string, string][] {
  const bands = [
    ["flowControl.defaultPriorityBand", fc.defaultPriorityBand],
    ["flowControl.defaultNegativePriorityBand", fc.defaultNegativePriorityBand],
    ...fc.priorityBands.map((b, i) => [`flowControl.priorityBands[${i}]`, b] as const),
  ] as const;
  const refs: [string, string][] = bands.flatMap(([path, band]) => [
    [`${path}.fairnessPolicyRef`, band.fairnessPolicyRef],
    [`${path}.orderingPolicyRef`, band.orderingPolicyRef],
  ]);
  refs.push(["flowControl.usageLimitPolicyPluginRef", fc.usageLimitPolicyPluginRef]);
  refs.push(["flowControl.saturationDetector.pluginRef", fc.saturationDetector.pluginRef]);
  if (fc.bandSelectionPolicyPluginRef)
    refs.push(["flowControl.bandSelectionPolicyPluginRef", fc.bandSelectionPolicyPluginRef]);
  return refs;
}

function dataLayerRefs(doc: EndpointPickerConfigDocument): [string, string][] {
  const refs: [string, string][] = [];
  const dl = doc.dataLayer;
  dl?.sources.forEach((s, i) => {
    refs.push([`dataLayer.sources[${i}].pluginRef`, s.pluginRef]);
    s.extractors.forEach((e, j) => {
      refs.push([`dataLayer.sources[${i}].extractors[${j}].pluginRef`, e.pluginRef]);
    });
  });
  if (dl?.discovery?.endpoints)
    refs.push(["dataLayer.discovery.endpoints.pluginRef", dl.discovery.endpoints.pluginRef]);
  if (dl?.discovery?.peers) refs.push(["dataLayer.discovery.peers.pluginRef", dl.discovery.peers.pluginRef]);
  if (dl?.crossReplica)
    refs.push(["dataLayer.crossReplica.syncerPluginRef", dl.crossReplica.syncerPluginRef]);
  doc.requestHandler?.parsers?.forEach((p, i) => {
    refs.push([`requestHandler.parsers[${i}].pluginRef`, p.pluginRef]);
  });
  return refs;
}

/** Checks references, adding registered flow-control defaults to `set.instances`; returns issues. */
export function resolveReferences(
  doc: EndpointPickerConfigDocument,
  flowControl: FlowControlConfig | undefined,
  set: PluginSet,
  options: InstantiateOptions,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const [path, ref] of [...(flowControl ? flowControlRefs(flowControl) : []), ...dataLayerRefs(doc)]) {
    if (set.instances.has(ref)) continue;
    const definition = FLOW_CONTROL_DEFAULTS.has(ref) ? options.registry.get(ref) : undefined;
    if (definition) {
      const env = {
        name: ref,
        clock: options.clock,
        tokenizer: options.tokenizer,
        lookup: (n: string) => set.instances.get(n),
      };
      set.instances.set(ref, definition.create(definition.parameters.parse({}), env));
    } else if (!FLOW_CONTROL_DEFAULTS.has(ref)) {
      issues.push({ path, message: `no plugin named "${ref}" in plugins` });
    }
  }
  return issues;
}
