/** Public surface of the config layer: load an llm-d EndpointPickerConfig into a runtime object. */
export { ConfigError, type ConfigIssue, formatIssues } from "./issues.ts";
export {
  type LoadConfigOptions,
  loadConfig,
  type ParseConfigResult,
  parseConfig,
  type RuntimeConfig,
} from "./load.ts";
export { PLANNED_PLUGINS } from "./planned-plugins.ts";
export { createBuiltinRegistry } from "./registry.ts";
export type { DataLayerSelection } from "./data-layer.ts";
export { endpointPoolOptionsFromConfig, type PoolOverrides } from "./pool-options.ts";
