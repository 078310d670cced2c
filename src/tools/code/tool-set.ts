/**
 * The `tools` option of executors and sessions: tools defined in the host program, read once at
 * construction (so a mistake fails there, with a TypeError naming the entry) into a CodeToolSet
 * that registers fresh adapters into each session's ToolRegistry.
 *
 *   tools: [weather, add]                          → tools.weather(args), tools.add(args)  (defineTool results)
 *   tools: { weather: tool({...}), add }           → a flat map: the keys name the tools (AI SDK tool sets as they are)
 *   tools: { github: { createIssue, listIssues } } → a nested map: a namespace, tools.github.createIssue(args)
 *   tools: { fs: mcpClient }                       → an MCP Client the program connected: tools.fs.<mcp tool>(args)
 *   tools: { math: { command: "node", args: ["server.mjs"] } }   → an MCP server ts-code-mode starts (as `type: mcp` YAML)
 *   tools: { cf: openApiTools({...}) }             → a tool source (defineToolSource): builds its own adapter
 *
 * OpenAI Agents and LangChain tools are converted first by `fromAgentsTools` / `fromLangChainTools`
 * in their adapter entry points; given as they are, they fail with a message naming the converter.
 */
import type { ToolAdapter } from "../protocol.js";
import { ToolRegistry } from "../registry.js";
import { recipeNameProblem, toolNameProblem } from "../validate.js";
import { CodeToolAdapter } from "./adapter.js";
import { describeTool } from "../describe.js";
import { CODE_TOOL, isCodeTool, type CodeTool, type ToolCallOptions } from "./define.js";
import { McpClientAdapter, type McpClientLike } from "./mcp-client.js";

/** Brand of `defineToolSource` results. */
export const TOOL_SOURCE: unique symbol = Symbol.for("ts-code-mode.tool-source");

/**
 * A source of tools that builds its own adapter (OpenAPI documents, a custom transport). Given
 * under a name (`tools: { cf: source }`), its adapter answers `tools.cf.<callable>(args)`.
 */
export interface CodeToolSource {
  readonly [TOOL_SOURCE]: true;
  /** The name when the source is given in an array; in a map, the key names it. */
  readonly name: string | undefined;
  /**
   * A fresh adapter for one session (called when an executor starts; closed when it closes).
   * `name` is what the adapter must report as its `name`. May load (read a spec file) before resolving.
   */
  createAdapter(name: string): ToolAdapter | Promise<ToolAdapter>;
}

export function defineToolSource(source: { name?: string; createAdapter(name: string): ToolAdapter | Promise<ToolAdapter> }): CodeToolSource {
  if (typeof source?.createAdapter !== "function") throw new TypeError("defineToolSource: createAdapter must be a function (name) => ToolAdapter");
  if (source.name !== undefined) assertName(source.name, "defineToolSource");
  return Object.freeze({ [TOOL_SOURCE]: true as const, name: source.name, createAdapter: (name: string) => source.createAdapter(name) });
}

export function isCodeToolSource(value: unknown): value is CodeToolSource {
  return typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[TOOL_SOURCE] === true;
}

/** An AI SDK tool (`tool({ description, inputSchema, execute })`), recognised by its shape. */
export interface AiSdkToolLike {
  description?: string | undefined;
  inputSchema?: unknown;
  /** AI SDK 4's name for inputSchema. */
  parameters?: unknown;
  outputSchema?: unknown;
  execute?: ((input: never, options: never) => unknown) | undefined;
}

/** MCP server parameters: ts-code-mode starts (stdio) or reaches (Streamable HTTP) the server, as for `type: mcp` YAML. */
export interface McpServerParams {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string | URL;
  headers?: Record<string, string>;
  /** Seconds per call (default 60). */
  timeout?: number;
  description?: string;
  tags?: string[];
}

/** Tools of one namespace: `tools.<namespace>.<key>(args)`. */
export type ToolNamespace = { readonly [tool: string]: CodeTool | AiSdkToolLike };

/** What may stand under a name in the `tools` map. */
export type ToolEntry = CodeTool | AiSdkToolLike | CodeToolSource | McpClientLike | McpServerParams | ToolNamespace;

/** The `tools` option: an array of defineTool results / named sources, a map of names to entries, or a set already checked. */
export type CodeToolsInput = ReadonlyArray<CodeTool | CodeToolSource> | { readonly [name: string]: ToolEntry } | CodeToolSet;

interface Entry {
  name: string;
  create(): ToolAdapter | Promise<ToolAdapter>;
  /** Tools defined in code know their declaration without I/O (not MCP servers or sources). */
  declaration?: () => string;
}

/** The `tools` option, checked: registers a fresh adapter per entry into a session's registry. */
export class CodeToolSet {
  private constructor(private readonly entries: readonly Entry[]) {}

  /** Tool names, in the order given. */
  get names(): string[] {
    return this.entries.map((e) => e.name);
  }

  /**
   * Read `input`. Throws TypeError naming the entry (`where` names the option, e.g.
   * "SubprocessExecutor({ tools })") for anything that is not a tool.
   */
  static from(input: CodeToolsInput, where: string): CodeToolSet {
    if (input instanceof CodeToolSet) return input;
    const entries: Entry[] = [];
    if (Array.isArray(input)) {
      input.forEach((item: unknown, i) => entries.push(arrayEntry(item, `${where}[${i}]`)));
    } else if (isPlainRecord(input)) {
      for (const [name, value] of Object.entries(input)) entries.push(mapEntry(name, value, `${where}.${name}`));
    } else {
      throw new TypeError(`${where}: expected an array of tools ([defineTool(...)]) or a map of names to tools ({ weather: tool(...) }); got ${kind(input)}`);
    }
    const seen = new Set<string>();
    for (const e of entries) {
      if (seen.has(e.name)) throw new TypeError(`${where}: two tools are named '${e.name}'`);
      seen.add(e.name);
    }
    return new CodeToolSet(entries);
  }

  /**
   * TypeScript declarations of the tools defined in code (defineTool, AI SDK tools, namespaces),
   * without starting anything; MCP clients, servers and tool sources are named only (their tools
   * are known once connected: tools.describe(name) inside the code).
   */
  declarations(): string {
    const known = this.entries.filter((e) => e.declaration);
    const other = this.entries.filter((e) => !e.declaration).map((e) => e.name);
    return [...known.map((e) => e.declaration!()), ...(other.length ? [`// Also: ${other.map((n) => `tools.${n}`).join(", ")} (see tools.describe(name)).\n`] : [])].join("\n");
  }

  /** Builds this set's adapters and adds them to `registry`; on a failure, closes what it built and rethrows. */
  async registerInto(registry: ToolRegistry): Promise<void> {
    const built: ToolAdapter[] = [];
    try {
      for (const e of this.entries) {
        const adapter = await e.create();
        built.push(adapter);
        if (adapter.name !== e.name) throw new TypeError(`tool source for '${e.name}' built an adapter named '${adapter.name}'`);
        registry.register(adapter, { source: `the tools option ('${e.name}')`, type: "code" });
      }
    } catch (err) {
      await Promise.allSettled(built.map((a) => a.close()));
      throw err;
    }
  }
}

/**
 * Splits an executor's `tools` option: a ToolRegistry built by the caller, or tools defined in code.
 * `where` names the option in errors.
 */
export function toolsOption(tools: unknown, where: string): { registry?: ToolRegistry; codeTools?: CodeToolSet } {
  if (tools === undefined) return {};
  if (tools instanceof ToolRegistry) return { registry: tools };
  if (tools instanceof CodeToolSet) return { codeTools: tools };
  return { codeTools: CodeToolSet.from(tools as CodeToolsInput, where) };
}

function arrayEntry(item: unknown, where: string): Entry {
  if (isCodeTool(item)) return toolEntry(item.name, item, where);
  if (isCodeToolSource(item)) {
    if (item.name === undefined) throw new TypeError(`${where}: a tool source in an array needs a name (defineToolSource({ name, ... })), or give it under a key: { name: source }`);
    return sourceEntry(item.name, item);
  }
  const hint = foreignHint(item);
  if (hint) throw new TypeError(`${where}: ${hint}`);
  if (isAiSdkTool(item)) throw new TypeError(`${where}: an AI SDK tool has no name of its own; pass tools as a map, { getWeather: tool({...}) }`);
  throw new TypeError(`${where}: expected a defineTool(...) result or a tool source; got ${kind(item)}. Maps of named tools go in an object: tools: { name: tool }`);
}

function mapEntry(name: string, value: unknown, where: string): Entry {
  assertName(name, where);
  if (isCodeTool(value)) return toolEntry(name, value, where);
  if (isCodeToolSource(value)) return sourceEntry(name, value);
  const hint = foreignHint(value);
  if (hint) throw new TypeError(`${where}: ${hint}`);
  if (isAiSdkTool(value)) return toolEntry(name, fromAiSdkTool(name, value, where), where);
  if (isMcpClient(value)) return { name, create: () => new McpClientAdapter(name, value) };
  if (isMcpParams(value)) return mcpParamsEntry(name, value, where);
  if (isPlainRecord(value)) return namespaceEntry(name, value, where);
  throw new TypeError(`${where}: expected a tool (defineTool, an AI SDK tool), a namespace of tools, an MCP client or MCP server parameters ({ command } / { url }); got ${kind(value)}`);
}

function toolEntry(name: string, tool: CodeTool, where: string): Entry {
  assertName(name, where);
  return { name, create: () => new CodeToolAdapter(name, { kind: "tool", tool }), declaration: () => describeTool(new CodeToolAdapter(name, { kind: "tool", tool }).infoNow()) };
}

function sourceEntry(name: string, source: CodeToolSource): Entry {
  return { name, create: () => source.createAdapter(name) };
}

function namespaceEntry(name: string, value: Record<string, unknown>, where: string): Entry {
  const tools = new Map<string, CodeTool>();
  for (const [key, item] of Object.entries(value)) {
    const at = `${where}.${key}`;
    const problem = recipeNameProblem(key);
    if (problem) throw new TypeError(`${at}: ${problem.replace("recipe name", "tool name")}`);
    const hint = foreignHint(item);
    if (hint) throw new TypeError(`${at}: ${hint}`);
    if (isCodeTool(item)) tools.set(key, item);
    else if (isAiSdkTool(item)) tools.set(key, fromAiSdkTool(key, item, at));
    else throw new TypeError(`${at}: a namespace holds tools (defineTool, AI SDK tools), one level deep; got ${kind(item)}`);
  }
  if (tools.size === 0) throw new TypeError(`${where}: an empty namespace; give it at least one tool`);
  const description = `Tools: ${[...tools.keys()].join(", ")}`;
  const shape = { kind: "namespace" as const, description, tags: [], tools };
  return { name, create: () => new CodeToolAdapter(name, shape), declaration: () => describeTool(new CodeToolAdapter(name, shape).infoNow()) };
}

function mcpParamsEntry(name: string, params: McpServerParams, where: string): Entry {
  const doc: Record<string, unknown> = { name, type: "mcp", ...params, ...(params.url instanceof URL ? { url: params.url.href } : {}) };
  const source = { file: where, dir: process.cwd() };
  return {
    name,
    create: async () => (await import("../adapters/mcp/adapter.js")).McpToolAdapter.fromDocument(doc, source),
  };
}

/** An AI SDK tool as a CodeTool: the same schemas; execute gets the SDK's options shape. */
export function fromAiSdkTool(name: string, t: AiSdkToolLike, where: string): CodeTool {
  const execute = t.execute as ((input: unknown, options: Record<string, unknown>) => unknown) | undefined;
  if (typeof execute !== "function") throw new TypeError(`${where}: this AI SDK tool has no execute function (a client-side tool); code mode runs tools on the host, so give it one`);
  const input = t.inputSchema ?? t.parameters;
  const tool: CodeTool = {
    [CODE_TOOL]: true,
    name,
    description: typeof t.description === "string" ? t.description : "",
    tags: [],
    input: input as CodeTool["input"],
    output: t.outputSchema as CodeTool["output"],
    execute: async (args, options: ToolCallOptions) => lastOf(await execute.call(t, args, { toolCallId: options.toolCallId, messages: [], abortSignal: options.signal })),
  };
  return Object.freeze(tool);
}

/** AI SDK tools may stream (an async iterable of partial outputs); the last one is the result. */
async function lastOf(value: unknown): Promise<unknown> {
  if (typeof value !== "object" || value === null || typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !== "function") return value;
  let last: unknown;
  for await (const part of value as AsyncIterable<unknown>) last = part;
  return last;
}

function isAiSdkTool(v: unknown): v is AiSdkToolLike {
  if (!isObjectLike(v)) return false;
  const t = v as Record<string, unknown>;
  return ("inputSchema" in t || "parameters" in t || typeof t["execute"] === "function") && !isMcpClient(v);
}

function isMcpClient(v: unknown): v is McpClientLike {
  return isObjectLike(v) && typeof (v as Record<string, unknown>)["callTool"] === "function" && typeof (v as Record<string, unknown>)["listTools"] === "function";
}

function isMcpParams(v: unknown): v is McpServerParams {
  if (!isPlainRecord(v)) return false;
  return typeof v["command"] === "string" || typeof v["url"] === "string" || v["url"] instanceof URL;
}

/** The message for a framework's tool that needs converting first, or null. */
function foreignHint(v: unknown): string | null {
  if (!isObjectLike(v)) return null;
  const t = v as Record<string, unknown>;
  if (t["type"] === "function" && typeof t["invoke"] === "function" && typeof t["name"] === "string") {
    return "an OpenAI Agents function tool: convert it first with fromAgentsTools([...]) from ts-code-mode/openai-agents";
  }
  if (Array.isArray(t["lc_namespace"]) || (typeof t["invoke"] === "function" && "schema" in t && typeof t["name"] === "string")) {
    return "a LangChain tool: convert it first with fromLangChainTools([...]) from ts-code-mode/langchain";
  }
  return null;
}

function assertName(name: string, where: string): void {
  const problem = toolNameProblem(name);
  if (problem) throw new TypeError(`${where}: ${problem}`);
}

function isObjectLike(v: unknown): v is object {
  return typeof v === "object" && v !== null;
}

function isPlainRecord(v: unknown): v is Record<string, unknown> {
  if (!isObjectLike(v) || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function kind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return `an object (${(v as object).constructor?.name ?? "no prototype"})`;
  return typeof v;
}
