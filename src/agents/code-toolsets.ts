/**
 * Toolsets written in code, for agents (issue 38 item 1). project.json lists modules
 * (`"toolsets": ["./tools/git.ts"]`, TypeScript loaded without a build step); each named export
 * that is a toolset becomes a toolset agents name in `tools`, like the built-in ones. Its tools are
 * made with `defineTool` — the one way to define a tool in code, as for `tools.*` — and a toolset
 * is either those tools (an array, or `defineToolset({ tools })`) or, for state, a factory called
 * once per agent call: `defineToolset({ create(call) { ...; return { tools, close } } })`. The
 * instance is the call's alone and `close` runs when the call ends (llm-do's call scopes).
 *
 *   export const git = defineToolset({
 *     needs_approval: ["commit"],
 *     create: ({ projectDir }) => ({ tools: [status, commit] }),
 *   });
 */
import { z } from "zod";
import { ValidationError } from "../errors.js";
import { isCodeTool, prepareCodeTool, type CodeTool } from "../tools/code/define.js";
import { renderValue } from "../values/display.js";
import type { AgentTool } from "./toolsets/types.js";

/** Brand of `defineToolset` results (Symbol.for: a module importing another copy of ts-code-mode still matches). */
const TOOLSET: unique symbol = Symbol.for("ts-code-mode.agent-toolset");

/** What a toolset's `create` gets: the agent call it serves. */
export interface ToolsetCall {
  agent: string;
  depth: number;
  projectDir: string;
  /** Aborted when the call ends or the run is stopped. */
  signal: AbortSignal;
}

export interface ToolsetInstance {
  tools: readonly CodeTool[];
  /** Runs when the agent call ends (also when it failed). */
  close?: () => void | Promise<void>;
}

export interface ToolsetDefinition {
  description?: string;
  /** Tools (by name) whose calls wait for approval; the project's overrides.<agent>.needs_approval still win. */
  needs_approval?: readonly string[];
  /** The same tools for every call (no state). */
  tools?: readonly CodeTool[];
  /** A fresh instance per agent call. */
  create?: (call: ToolsetCall) => ToolsetInstance | Promise<ToolsetInstance>;
}

export interface AgentToolset {
  readonly [TOOLSET]: true;
  readonly needsApproval: ReadonlySet<string>;
  instance(call: ToolsetCall): Promise<ToolsetInstance>;
}

export function defineToolset(definition: ToolsetDefinition): AgentToolset {
  const { tools, create, needs_approval: approval = [] } = definition;
  if ((tools === undefined) === (create === undefined)) throw new TypeError("defineToolset: give either tools (the same for every call) or create(call) (a fresh instance per agent call)");
  if (tools !== undefined) checkTools(tools, "defineToolset");
  if (!Array.isArray(approval) || !approval.every((n) => typeof n === "string")) throw new TypeError("defineToolset: needs_approval must be an array of tool names");
  return Object.freeze({
    [TOOLSET]: true as const,
    needsApproval: new Set(approval),
    async instance(call: ToolsetCall): Promise<ToolsetInstance> {
      if (tools) return { tools };
      const made = await create!(call);
      if (typeof made !== "object" || made === null) throw new TypeError("defineToolset: create(call) must return { tools, close? }");
      checkTools(made.tools, "defineToolset create(call)");
      return made;
    },
  });
}

function checkTools(tools: unknown, where: string): asserts tools is readonly CodeTool[] {
  if (!Array.isArray(tools) || !tools.every(isCodeTool)) throw new TypeError(`${where}: tools must be an array of tools made with defineTool`);
  const names = tools.map((t) => t.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw new TypeError(`${where}: two tools are named ${dup}`);
}

/** A module export as a toolset: defineToolset's result, or an array of defineTool tools; anything else is not a toolset. */
export function asToolset(value: unknown): AgentToolset | null {
  if (typeof value === "object" && value !== null && (value as Record<PropertyKey, unknown>)[TOOLSET] === true) return value as AgentToolset;
  if (Array.isArray(value) && value.length > 0 && value.every(isCodeTool)) return defineToolset({ tools: value });
  return null;
}

/** The instance's tools as agent tools: arguments checked by their schema, the result as text for the model. */
export function agentToolsOf(toolset: AgentToolset, instance: ToolsetInstance, maxOutputChars: number, runId: string): AgentTool[] {
  return instance.tools.map((tool) => {
    const prepared = prepareCodeTool(tool);
    const json = prepared.input.jsonSchema();
    const inputSchema = json ? z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]) : z.record(z.string(), z.unknown());
    let calls = 0;
    return {
      name: tool.name,
      description: tool.description,
      inputSchema,
      needsApproval: toolset.needsApproval.has(tool.name),
      async execute(args, signal) {
        let value = args;
        if (prepared.input.validate) {
          const checked = await prepared.input.validate(args);
          if (!checked.ok) throw new ValidationError(`${tool.name}: ${checked.problems.join("; ")}`);
          value = checked.value;
        }
        const result = await tool.execute(value as Record<string, unknown>, { signal, toolCallId: `${runId}-${tool.name}-${++calls}`, runId, executor: "host", timeoutMs: undefined });
        return typeof result === "string" ? result.slice(0, maxOutputChars) : renderValue(result, maxOutputChars);
      },
    };
  });
}
