/** Public surface of the tools layer. */
export type { CallContext, CallableInfo, ParamSpec, ParamType, ToolAdapter, ToolInfo, ToolType } from "./protocol.js";
export { ToolRegistry, type CallableListing, type ToolListing, type ToolRegistryOptions } from "./registry.js";
export { callableSignature, describeTool, describeTools, paramTypeText } from "./describe.js";
export { validateArgs, toolNameProblem, RESERVED_NAMESPACE_METHODS } from "./validate.js";
export {
  createToolAdapter,
  defaultToolFactories,
  YAML_TOOL_TYPES,
  type ToolFactories,
  type ToolFactory,
  type ToolSource,
  type YamlToolType,
} from "./adapters/index.js";
export { CliToolAdapter, cliToolInfo } from "./adapters/cli/adapter.js";
export { parseCliTool, DEFAULT_TIMEOUT_SECONDS, type CliToolSpec, type CliOption, type CliPositional, type CliRecipe } from "./adapters/cli/schema.js";
export { buildArgv, mergeArgs } from "./adapters/cli/argv.js";
export { runCommand, MAX_STDOUT_BYTES, STDERR_EXCERPT_CHARS } from "./adapters/cli/run.js";
export * from "./middleware/index.js";
