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
export { HttpToolAdapter, httpToolInfo, type HttpToolAdapterOptions } from "./adapters/http/adapter.js";
export { parseHttpTool, DEFAULT_HTTP_TIMEOUT_SECONDS, type HttpToolSpec, type HttpEndpoint, type HttpParam } from "./adapters/http/schema.js";
export { MAX_RESPONSE_BYTES } from "./adapters/http/send.js";
export { McpToolAdapter, mcpCallableInfo, type McpListedTool } from "./adapters/mcp/adapter.js";
export { parseMcpTool, DEFAULT_MCP_TIMEOUT_SECONDS, SAFE_ENV_VARS, type McpToolSpec, type McpStdioServer, type McpHttpServer } from "./adapters/mcp/schema.js";
export { paramsFromInputSchema, typeTextFromSchema } from "./adapters/mcp/json-schema.js";
export * from "./middleware/index.js";
export { ToolableToolAdapter } from "./adapters/toolable/adapter.js";
export { parseToolableTool, type ToolableSpec } from "./adapters/toolable/schema.js";
export type { ToolableHostOptions, ToolableEvent, SampleRequest, Sampler } from "./adapters/toolable/host.js";
export type { ToolableSession, SessionEvent } from "./adapters/toolable/session.js";
export type { PartialResult, ToolableEventBody } from "./adapters/toolable/envelope.js";
export * from "./code/index.js";
export { OpenApiToolAdapter, type OpenApiToolAdapterOptions } from "./adapters/openapi/adapter.js";
export { openapiTools, type OpenApiToolsOptions } from "./adapters/openapi/tools.js";
