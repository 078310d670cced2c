/**
 * `defineTool`: the one way to define a tool in code (ARCHITECTURE.md, "One tool definition API").
 * A tool is a plain object — name, description, input schema, optional output schema, and an
 * `execute` function — that the host runs when guest code calls `tools.<name>(args)`. Functions
 * never cross into a guest: every executor reaches `execute` through the one host RPC provider,
 * after the registry validated the arguments and the tool middleware (policy, approval, audit,
 * retry) ran.
 *
 * The same object is what the AI SDK / OpenAI Agents / LangChain converters produce, and what a
 * tool source (OpenAPI) builds its operations from.
 */
import { IDENTIFIER_RE } from "../validate.js";
import { normalizeSchema, type InferSchema, type NormalizedSchema, type ToolSchema } from "./schema.js";

/** Brand of `defineTool` results; `isCodeTool` checks it. */
export const CODE_TOOL: unique symbol = Symbol.for("ts-code-mode.code-tool");

/** What `execute` gets besides the arguments. */
export interface ToolCallOptions {
  /** Aborted when the run that made the call ends, times out or is cancelled: stop work then. */
  signal: AbortSignal;
  /** Unique per call (the audit log's requestId when middleware runs). */
  toolCallId: string;
  /** The run the call belongs to ("host" for Session.callTool). */
  runId: string;
  /** Which executor's guest made the call ("subprocess", "sandbox", ...; "host" for Session.callTool). */
  executor: string;
  /** Milliseconds the call may take (the run's time left), when known. */
  timeoutMs: number | undefined;
}

export interface ToolDefinition<I extends ToolSchema = ToolSchema, O extends ToolSchema | undefined = undefined> {
  /** How guest code calls it: `tools.<name>(args)`. In a map (`tools: { weather }`) the key names it instead. */
  name: string;
  /** What it does, for the model (discovery, search, `tools.describe`). */
  description: string;
  /** zod object schema, any Standard Schema, an AI SDK schema, or a JSON Schema object. */
  input: I;
  /** Schema of the result: types it in `tools.describe`, and is checked when it can validate. */
  output?: O;
  tags?: string[];
  execute(args: InferSchema<I>, options: ToolCallOptions): (O extends ToolSchema ? InferSchema<O> : unknown) | Promise<O extends ToolSchema ? InferSchema<O> : unknown>;
}

/** A tool defined in code (the result of `defineTool`). */
export interface CodeTool<Args = Record<string, unknown>, Result = unknown> {
  readonly [CODE_TOOL]: true;
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
  /** The schemas as given. */
  readonly input: ToolSchema;
  readonly output: ToolSchema | undefined;
  execute(args: Args, options: ToolCallOptions): Result | Promise<Result>;
}

/** A CodeTool with its schemas read (what the adapter works with). */
export interface PreparedCodeTool {
  tool: CodeTool;
  input: NormalizedSchema;
  output: NormalizedSchema | undefined;
}

const prepared = new WeakMap<CodeTool, PreparedCodeTool>();

/** The tool's schemas read once (they were checked by defineTool, so this does not throw for one). */
export function prepareCodeTool(tool: CodeTool): PreparedCodeTool {
  let p = prepared.get(tool);
  if (!p) {
    p = {
      tool,
      // No input schema (an AI SDK tool without one): any arguments, unchecked.
      input: tool.input === undefined ? { jsonSchema: () => undefined, validate: undefined } : normalizeSchema(tool.input, `tool '${tool.name}': input`),
      output: tool.output === undefined ? undefined : normalizeSchema(tool.output, `tool '${tool.name}': output`),
    };
    prepared.set(tool, p);
  }
  return p;
}

export function isCodeTool(value: unknown): value is CodeTool {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[CODE_TOOL] === true;
}

/**
 * Define a tool in code. Throws TypeError at once for a bad name, a missing `execute` or a value
 * that is not a schema, so a mistake shows where the tool is written, not at its first call.
 *
 * ```ts
 * const weather = defineTool({
 *   name: "weather",
 *   description: "Current weather of a city",
 *   input: z.object({ city: z.string() }),
 *   output: z.object({ tempC: z.number() }),
 *   execute: async ({ city }) => ({ tempC: await lookup(city) }),
 * });
 * const session = new Session({ storage, executor: new SubprocessExecutor({ tools: [weather] }) });
 * ```
 */
export function defineTool<I extends ToolSchema, O extends ToolSchema | undefined = undefined>(
  definition: ToolDefinition<I, O>,
): CodeTool<InferSchema<I>, O extends ToolSchema ? InferSchema<O> : unknown> {
  if (typeof definition !== "object" || definition === null) throw new TypeError("defineTool(definition): expected { name, description, input, output?, execute }");
  const { name, description, input, output, execute, tags } = definition;
  if (typeof name !== "string" || !IDENTIFIER_RE.test(name)) {
    throw new TypeError(`defineTool: name must be an identifier (letters, digits, _; not starting with a digit); got ${JSON.stringify(name)}`);
  }
  if (typeof description !== "string") throw new TypeError(`defineTool ${name}: description must be a string`);
  if (typeof execute !== "function") throw new TypeError(`defineTool ${name}: execute must be a function (args, options) => result`);
  if (tags !== undefined && (!Array.isArray(tags) || !tags.every((t) => typeof t === "string"))) throw new TypeError(`defineTool ${name}: tags must be an array of strings`);
  if (input === undefined) throw new TypeError(`defineTool ${name}: input is required (a zod object schema, a Standard Schema or a JSON Schema; z.object({}) for none)`);
  const tool: CodeTool = {
    [CODE_TOOL]: true,
    name,
    description,
    tags: Object.freeze([...(tags ?? [])]),
    input,
    output,
    execute: execute as CodeTool["execute"],
  };
  // Read the schemas now: a value that is not a schema fails here, beside the definition.
  prepareCodeTool(tool);
  return Object.freeze(tool) as CodeTool<InferSchema<I>, O extends ToolSchema ? InferSchema<O> : unknown>;
}
