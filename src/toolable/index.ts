/**
 * `ts-code-mode/toolable`: write toolable executables in TypeScript that any toolable caller (the
 * reference Python registry, or ts-code-mode's `type: toolable` adapter) can discover and call.
 */
export { defineTool, defineResource, definePrompt, partialResult, inputJsonSchema, type ToolDefinition, type ToolContext, type SessionIO, type SampleOptions, type ResourceDefinition, type PromptDefinition } from "./define.js";
export { ToolError, ERROR_CODES, type ErrorCode, type ToolErrorOptions } from "./errors.js";
export { runCli, inputFromFlags, toEnvelope, type CliOptions } from "./cli.js";
export { pyDumps } from "./json.js";
