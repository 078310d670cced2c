/**
 * `ts-code-mode/openai-agents`: code mode as OpenAI Agents SDK function tools.
 *
 * ```ts
 * const agent = new Agent({ name: "coder", instructions: await codeModeSystemPrompt(session), tools: codeModeTools(session) });
 * ```
 *
 * Each tool returns the text a model reads (the same text as the MCP server's). `needsApproval`
 * maps to the SDK's own: the run stops with an interruption, and the code runs only after
 * `result.state.approve(interruption)` and a resumed run. In a durable session a call paused
 * *inside* the code becomes an interruption too: the model's run_code call that resumes the run
 * (`resume`, with its proposed decisions) waits for `approve` (the run goes on with them) or
 * `reject` (the run stays paused; the model reads the message) (`approveResume`, default true).
 *
 * Your own function tools become `tools.*` inside the code with `fromAgentsTools`:
 *
 * ```ts
 * const session = new Session({ storage, tools: fromAgentsTools([getWeather, sendEmail]) });
 * ```
 */
import type { FunctionTool } from "@openai/agents";
import { defineTool, type CodeTool } from "../tools/code/define.js";
import { z } from "zod";
import { codeModeSystemPrompt, resolveOptions, runCodeApproval, toolSpecs, type CodeModeToolsOptions, type ToolSpec } from "./core.js";
import { loadPeer } from "./peer.js";
import type { Session } from "../session.js";

const agents = await loadPeer<typeof import("@openai/agents")>({ name: "@openai/agents", adapter: "ts-code-mode/openai-agents", install: "@openai/agents@^0.14.3" });

export { codeModeSystemPrompt, type CodeModeToolsOptions };
export { MissingPeerError } from "./peer.js";

/** Function tools for `new Agent({ tools })`: run_code first; search_tools, describe_tool, search_workflows with `discovery: true`. */
export function codeModeTools(session: Session, options: CodeModeToolsOptions = {}): FunctionTool[] {
  const resolved = resolveOptions(options);
  return toolSpecs(session, resolved).map((spec) => toAgentsTool(spec, spec.name === "run_code" ? runCodeApproval(session, resolved) : undefined));
}

function toAgentsTool(spec: ToolSpec, needsApproval: ((input: Record<string, unknown>) => Promise<boolean>) | undefined): FunctionTool {
  const t = agents.tool({
    name: spec.name,
    description: spec.description,
    // Non-strict with a JSON schema: strict mode would make timeout_ms required (nullable). The
    // handler validates the input with the zod schema itself; a bad input becomes a tool error the model reads.
    parameters: jsonParameters(spec),
    strict: false,
    execute: async (input, _context, details) => (await spec.execute(input as Record<string, unknown>, details?.signal)).text,
    ...(needsApproval ? { needsApproval: async (_context: unknown, input: unknown) => needsApproval(typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {}) } : {}),
  });
  return t as unknown as FunctionTool;
}

/**
 * OpenAI Agents function tools (`tool({ name, parameters, execute })`) as code tools, by name:
 * `new Session({ storage, tools: fromAgentsTools([a, b]) })` gives `tools.a(args)` and `tools.b(args)`
 * in the code. Each call goes through the tool's own `invoke` (its parsing, its error handling),
 * with a fresh RunContext and the run's abort signal. Names must be identifiers.
 */
/** What fromAgentsTools reads of a function tool (any context and parameter types). */
export interface AgentsFunctionToolLike {
  type: "function";
  name: string;
  description: string;
  parameters: unknown;
  invoke(runContext: never, input: string, details?: never): Promise<unknown>;
}

export function fromAgentsTools(tools: readonly AgentsFunctionToolLike[]): Record<string, CodeTool> {
  if (!Array.isArray(tools)) throw new TypeError("fromAgentsTools(tools): expected an array of function tools");
  const out: Record<string, CodeTool> = {};
  tools.forEach((t: AgentsFunctionToolLike, i) => {
    if (t?.type !== "function" || typeof t.invoke !== "function") throw new TypeError(`fromAgentsTools: tools[${i}] is not a function tool (tool({ name, parameters, execute }) from @openai/agents)`);
    if (Object.hasOwn(out, t.name)) throw new TypeError(`fromAgentsTools: two tools are named '${t.name}'`);
    out[t.name] = defineTool({
      name: t.name,
      description: t.description,
      input: t.parameters as Record<string, unknown>,
      execute: async (args, { signal }) => (t.invoke as unknown as (runContext: unknown, input: string, details: { signal: AbortSignal }) => Promise<unknown>)(new agents.RunContext(), JSON.stringify(args), { signal }),
    });
  });
  return out;
}

/** The zod input schema as the JSON schema the SDK sends (properties and required, nothing else). */
function jsonParameters(spec: ToolSpec): { type: "object"; properties: Record<string, z.core.JSONSchema.JSONSchema>; required: string[]; additionalProperties: true } {
  const json = z.toJSONSchema(spec.inputSchema) as { properties?: Record<string, z.core.JSONSchema.JSONSchema>; required?: string[] };
  return { type: "object", properties: json.properties ?? {}, required: json.required ?? [], additionalProperties: true };
}
