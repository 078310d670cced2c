/**
 * The AI SDK's `LanguageModel` as ts-code-mode's published types name it: a "provider:model"
 * string, or a model object such as `openai("gpt-4o")` (any AI SDK model fits). Declared here
 * instead of imported from the AI SDK so that the declarations compile in a project that has not
 * installed the AI SDK (only agents need it) and with `skipLibCheck: false` (the SDK's own
 * declarations need @types/json-schema, which it does not install).
 */
export type AgentModel = string | { readonly specificationVersion: string; readonly provider: string; readonly modelId: string };
