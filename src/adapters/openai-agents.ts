/**
 * `ts-code-mode/openai-agents`: code mode as OpenAI Agents SDK function tools.
 *
 * ```ts
 * const agent = new Agent({ name: "coder", instructions: await codeModeSystemPrompt(session), tools: codeModeTools(session) });
 * ```
 *
 * Each tool returns the text a model reads (the same text as the MCP server's). `needsApproval`
 * maps to the SDK's own: the run stops with an interruption, and the code runs only after
 * `result.state.approve(interruption)` and a resumed run.
 */
import type { FunctionTool } from "@openai/agents";
import { z } from "zod";
import { codeModeSystemPrompt, resolveOptions, runNeedsApproval, toolSpecs, type CodeModeToolsOptions, type ToolSpec } from "./core.js";
import { loadPeer } from "./peer.js";
import type { Session } from "../session.js";

const agents = await loadPeer<typeof import("@openai/agents")>({ name: "@openai/agents", adapter: "ts-code-mode/openai-agents", install: "@openai/agents@^0.14.3" });

export { codeModeSystemPrompt, type CodeModeToolsOptions };
export { MissingPeerError } from "./peer.js";

/** Function tools for `new Agent({ tools })`: run_code first; search_tools, describe_tool, search_workflows with `discovery: true`. */
export function codeModeTools(session: Session, options: CodeModeToolsOptions = {}): FunctionTool[] {
  const resolved = resolveOptions(options);
  return toolSpecs(session, resolved).map((spec) =>
    toAgentsTool(spec, spec.name === "run_code" && resolved.needsApproval !== false ? (code) => runNeedsApproval(resolved.needsApproval, code) : undefined),
  );
}

function toAgentsTool(spec: ToolSpec, needsApproval: ((code: string) => Promise<boolean>) | undefined): FunctionTool {
  const t = agents.tool({
    name: spec.name,
    description: spec.description,
    // Non-strict with a JSON schema: strict mode would make timeout_ms required (nullable). The
    // handler validates the input with the zod schema itself; a bad input becomes a tool error the model reads.
    parameters: jsonParameters(spec),
    strict: false,
    execute: async (input, _context, details) => (await spec.execute(input as Record<string, unknown>, details?.signal)).text,
    ...(needsApproval ? { needsApproval: async (_context: unknown, input: unknown) => needsApproval(String((input as { code?: unknown }).code)) } : {}),
  });
  return t as unknown as FunctionTool;
}

/** The zod input schema as the JSON schema the SDK sends (properties and required, nothing else). */
function jsonParameters(spec: ToolSpec): { type: "object"; properties: Record<string, z.core.JSONSchema.JSONSchema>; required: string[]; additionalProperties: true } {
  const json = z.toJSONSchema(spec.inputSchema) as { properties?: Record<string, z.core.JSONSchema.JSONSchema>; required?: string[] };
  return { type: "object", properties: json.properties ?? {}, required: json.required ?? [], additionalProperties: true };
}
