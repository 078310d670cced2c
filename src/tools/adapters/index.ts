/**
 * Which adapter a tool YAML document becomes, keyed by its `type:` field. The registry only talks
 * to this map, so an adapter for a new transport plugs in by adding one factory here (or by passing
 * `factories` to ToolRegistry.load) — nothing else changes.
 */
import path from "node:path";
import { ValidationError } from "../../errors.js";
import type { ToolAdapter } from "../protocol.js";
import type { ToolableHostOptions } from "./toolable/host.js";

/** Values of `type:` in a tool YAML. Absent means "cli". */
export const YAML_TOOL_TYPES = ["cli", "mcp", "http", "openapi", "toolable"] as const;
export type YamlToolType = (typeof YAML_TOOL_TYPES)[number];

export interface ToolSource {
  /** Path of the YAML file (or another label for where the document came from), for messages. */
  file: string;
  /** Directory the file is in; adapters resolve relative paths (scripts, specs) against it. */
  dir: string;
}

/**
 * Turn one parsed YAML document into an adapter. Throws ValidationError naming `source.file`.
 * May be async: an adapter may need to read a referenced file. Connecting (MCP) belongs in
 * `ToolAdapter.info()`, not here, so loading never waits on the network.
 */
export type ToolFactory = (doc: Record<string, unknown>, source: ToolSource) => ToolAdapter | Promise<ToolAdapter>;

export type ToolFactories = Partial<Record<YamlToolType, ToolFactory>>;

export interface ToolIndexOptions {
  /**
   * Folder where tool sources keep indexes derived from their inputs, checked against them on
   * each read (an OpenAPI spec's operations: `<indexDir>/openapi`). Sessions on a file base use
   * `<base>/tool-index`. Default: none, every load derives them again.
   */
  indexDir?: string;
}

/**
 * The factories this build ships. Each adapter's module is imported when a tool file of its type
 * is first loaded: tool files are read on first `tools.*` use, so a run that calls no tool parses
 * none of them, and a folder of CLI tools never loads the MCP or HTTP adapter.
 */
export function defaultToolFactories(toolable: ToolableHostOptions = {}, indexes: ToolIndexOptions = {}): ToolFactories {
  return {
    toolable: async (doc, source) => (await import("./toolable/adapter.js")).ToolableToolAdapter.fromDocument(doc, source, toolable),
    cli: async (doc, source) => (await import("./cli/adapter.js")).CliToolAdapter.fromDocument(doc, source.file),
    http: async (doc, source) => (await import("./http/adapter.js")).HttpToolAdapter.fromDocument(doc, source.file),
    mcp: async (doc, source) => (await import("./mcp/adapter.js")).McpToolAdapter.fromDocument(doc, source),
    openapi: async (doc, source) =>
      (await import("./openapi/adapter.js")).OpenApiToolAdapter.fromDocument(doc, source, indexes.indexDir !== undefined ? { indexDir: path.join(indexes.indexDir, "openapi") } : {}),
  };
}

function isMapping(doc: unknown): doc is Record<string, unknown> {
  return typeof doc === "object" && doc !== null && !Array.isArray(doc);
}

/** Dispatch a YAML document on its `type:` to the matching factory. */
export async function createToolAdapter(doc: unknown, source: ToolSource, factories: ToolFactories = defaultToolFactories()): Promise<ToolAdapter> {
  if (doc === null || doc === undefined) throw new ValidationError(`Invalid tool definition in ${source.file}: the file is empty`);
  if (!isMapping(doc)) {
    throw new ValidationError(`Invalid tool definition in ${source.file}: expected a mapping with name, description, ... at the top level; got ${Array.isArray(doc) ? "a list" : typeof doc}`);
  }
  const rawType = doc["type"] ?? "cli";
  if (typeof rawType !== "string" || !(YAML_TOOL_TYPES as readonly string[]).includes(rawType)) {
    throw new ValidationError(`Invalid tool definition in ${source.file}:\n  type: expected one of ${YAML_TOOL_TYPES.join(", ")} (absent means cli); got ${JSON.stringify(rawType)}`);
  }
  const factory = factories[rawType as YamlToolType];
  if (!factory) throw new ValidationError(`Invalid tool definition in ${source.file}: tool type '${rawType}' is not supported by this build`);
  return factory(doc, source);
}
