/**
 * Runtime classification of plugin instances: a plugin is bound to every extension point whose
 * method it implements (llm-d binds by interface the same way).
 */
import type {
  DataProducer,
  Filter,
  Picker,
  PreRequest,
  ProfileHandler,
  RequestHeaderProcessor,
  ResponseHooks,
  Scorer,
  Screener,
} from "./types.ts";
import type { DataLayerPlugin } from "../../endpoints/data-layer/plugin.ts";
import type { Plugin } from "../../plugin/types.ts";

type Methods = Record<string, unknown>;

function has(plugin: Plugin, method: string): boolean {
  return typeof (plugin as unknown as Methods)[method] === "function";
}

/** True when the plugin implements `filter`. */
export const isFilter = (p: Plugin): p is Filter => has(p, "filter");
/** True when the plugin implements `screen`. */
export const isScreener = (p: Plugin): p is Screener => has(p, "screen");
/** True when the plugin implements `score`. */
export const isScorer = (p: Plugin): p is Scorer => has(p, "score");
/** True when the plugin implements `pick`. */
export const isPicker = (p: Plugin): p is Picker => has(p, "pick");
/** True when the plugin implements `pickProfiles` and `processResults`. */
export const isProfileHandler = (p: Plugin): p is ProfileHandler =>
  has(p, "pickProfiles") && has(p, "processResults");
/** True when the plugin implements `processRequestHeaders`. */
export const isRequestHeaderProcessor = (p: Plugin): p is RequestHeaderProcessor =>
  has(p, "processRequestHeaders");
/** True when the plugin implements `produce`. */
export const isDataProducer = (p: Plugin): p is DataProducer => has(p, "produce");
/** True when the plugin implements `preRequest`. */
export const isPreRequest = (p: Plugin): p is PreRequest => has(p, "preRequest");
/** True when the plugin implements `onFirstToken` or `onResponseComplete`. */
export const isResponseHooks = (p: Plugin): p is ResponseHooks =>
  has(p, "onFirstToken") || has(p, "onResponseComplete");

/** True when the plugin is a data-layer plugin (has a `dataLayerKind`). */
export const isDataLayerPlugin = (p: Plugin): p is DataLayerPlugin =>
  typeof (p as unknown as Methods).dataLayerKind === "string";

const dataLayerKind = (kind: string) => (p: Plugin) => isDataLayerPlugin(p) && p.dataLayerKind === kind;

const KIND_CHECKS: readonly [string, (p: Plugin) => boolean][] = [
  ["profile-handler", isProfileHandler],
  ["screener", isScreener],
  ["filter", isFilter],
  ["scorer", isScorer],
  ["picker", isPicker],
  ["request-header", isRequestHeaderProcessor],
  ["data-producer", isDataProducer],
  ["pre-request", isPreRequest],
  ["response", isResponseHooks],
  ["data-source", dataLayerKind("data-source")],
  ["extractor", dataLayerKind("extractor")],
  ["discovery", dataLayerKind("discovery")],
];

/** The extension points an instance implements, e.g. `["filter"]` or `["data-producer", "pre-request"]`. */
export function pluginKinds(plugin: Plugin): string[] {
  return KIND_CHECKS.filter(([, check]) => check(plugin)).map(([kind]) => kind);
}
