/** Tools defined in code: defineTool, the `tools` option's forms, tool sources. */
export { defineTool, isCodeTool, type CodeTool, type ToolDefinition, type ToolCallOptions } from "./define.js";
export type { ToolSchema, StandardSchemaV1, AiSdkSchema, JsonSchemaObject, InferSchema } from "./schema.js";
export {
  CodeToolSet,
  defineToolSource,
  isCodeToolSource,
  fromAiSdkTool,
  type CodeToolSource,
  type CodeToolsInput,
  type ToolEntry,
  type ToolNamespace,
  type AiSdkToolLike,
  type McpServerParams,
} from "./tool-set.js";
export { CodeToolAdapter, type CodeToolShape } from "./adapter.js";
export type { McpClientLike } from "./mcp-client.js";
