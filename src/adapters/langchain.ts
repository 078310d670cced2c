/**
 * `ts-code-mode/langchain`: code mode as LangChain tools for `createAgent`.
 *
 * ```ts
 * const agent = createAgent({ model, tools: codeModeTools(session), systemPrompt: await codeModeSystemPrompt(session) });
 * ```
 *
 * Each tool answers with `content_and_artifact`: the text a model reads (the MCP server's format)
 * as the ToolMessage content and the structured result as its `artifact`. LangChain has no
 * approval flag on a tool; its human-in-the-loop middleware is the equivalent, so approval is
 * `codeModeApproval()` in `createAgent({ middleware, checkpointer })`.
 *
 * Your own LangChain tools become `tools.*` inside the code with `fromLangChainTools`:
 *
 * ```ts
 * const session = new Session({ storage, tools: fromLangChainTools([getWeather]) });
 * ```
 */
import type { DynamicStructuredTool, StructuredToolInterface } from "@langchain/core/tools";
import { defineTool, type CodeTool } from "../tools/code/define.js";
import type { AgentMiddleware } from "langchain";
import { codeModeSystemPrompt, isResumption, resolveOptions, runNeedsApproval, toolSpecs, type CodeModeToolsOptions, type NeedsApproval, type ToolSpec } from "./core.js";
import { explainPause } from "../runs/durable.js";
import type { PendingCall } from "../execution/protocol.js";
import { loadPeer } from "./peer.js";
import type { Session } from "../session.js";
import { ValidationError } from "../errors.js";

const [core, langchain] = await Promise.all([
  loadPeer<typeof import("@langchain/core/tools")>({ name: "@langchain/core/tools", adapter: "ts-code-mode/langchain", install: "@langchain/core@^1.4 langchain@^1.5" }),
  loadPeer<typeof import("langchain")>({ name: "langchain", adapter: "ts-code-mode/langchain", install: "@langchain/core@^1.4 langchain@^1.5" }),
]);

export { codeModeSystemPrompt, type NeedsApproval };
export { MissingPeerError } from "./peer.js";

/**
 * As for the other adapters, without `needsApproval`: approval is the `codeModeApproval()`
 * middleware here. `approveResume` only says so to the model (a pause's text tells it a person
 * reviews its resume call): set it when the agent has codeModeApproval(). Default false.
 */
export type LangChainToolsOptions = Omit<CodeModeToolsOptions, "needsApproval">;

/** LangChain tools for `createAgent({ tools })`: run_code first; search_tools, describe_tool, search_workflows with `discovery: true`. */
export function codeModeTools(session: Session, options: LangChainToolsOptions = {}): DynamicStructuredTool[] {
  if ("needsApproval" in options) {
    throw new ValidationError("ts-code-mode/langchain: LangChain tools carry no approval flag; add codeModeApproval() to createAgent's middleware (with a checkpointer) instead of needsApproval");
  }
  return toolSpecs(session, resolveOptions({ approveResume: false, ...options })).map(toLangChainTool);
}

function toLangChainTool(spec: ToolSpec): DynamicStructuredTool {
  const t = core.tool(
    async (input: Record<string, unknown>, config: { signal?: AbortSignal }): Promise<[string, Record<string, unknown>]> => {
      const reply = await spec.execute(input, config?.signal);
      return [reply.text, { ...reply.structured, isError: reply.isError }];
    },
    { name: spec.name, description: spec.description, schema: spec.inputSchema, responseFormat: "content_and_artifact" },
  );
  return t as unknown as DynamicStructuredTool;
}

/**
 * LangChain tools (`tool(fn, { name, description, schema })`, any StructuredTool) as code tools,
 * by name: `new Session({ storage, tools: fromLangChainTools([a, b]) })` gives `tools.a(args)` in
 * the code. Each call is the tool's own `invoke(args, { signal })`; the schema (zod or JSON Schema)
 * gives discovery and validation. Names must be identifiers.
 */
export function fromLangChainTools(tools: readonly StructuredToolInterface[]): Record<string, CodeTool> {
  if (!Array.isArray(tools)) throw new TypeError("fromLangChainTools(tools): expected an array of LangChain tools");
  const out: Record<string, CodeTool> = {};
  tools.forEach((t: StructuredToolInterface, i) => {
    if (typeof t?.invoke !== "function" || typeof t.name !== "string") throw new TypeError(`fromLangChainTools: tools[${i}] is not a LangChain tool (tool(fn, { name, description, schema }))`);
    if (Object.hasOwn(out, t.name)) throw new TypeError(`fromLangChainTools: two tools are named '${t.name}'`);
    out[t.name] = defineTool({
      name: t.name,
      description: t.description ?? "",
      input: t.schema as Record<string, unknown>,
      execute: async (args, { signal }) => (t.invoke as (input: unknown, config: { signal: AbortSignal }) => Promise<unknown>)(args, { signal }),
    });
  });
  return out;
}

/**
 * LangChain's human-in-the-loop middleware set up for run_code: the agent stops before the code
 * runs (an interrupt; resume with `new Command({ resume: { decisions: [{ type: "approve" }] } })`,
 * `{ type: "edit", editedAction: { name: "run_code", args } }` or `{ type: "reject", message }`).
 * `needsApproval` as for the other adapters: `true` (default) for every call, or a function of the
 * code. In a durable session a call paused *inside* the code is brought here too: the model's
 * run_code call that resumes the run (`resume`, with its proposed decisions) always interrupts
 * (unless `approveResume: false`), described with the pending calls; approve runs the proposal,
 * edit runs the decisions you put in `editedAction.args.resume`, reject leaves the run paused and
 * tells the model why. Needs a checkpointer on the agent.
 */
export function codeModeApproval(needsApproval: NeedsApproval = true, options: { approveResume?: boolean } = {}): AgentMiddleware {
  if (typeof needsApproval !== "boolean" && typeof needsApproval !== "function") {
    throw new ValidationError(`needsApproval must be true, false or a function (code) => boolean; got ${typeof needsApproval}`);
  }
  const approveResume = options.approveResume ?? true;
  const when = async (request: { toolCall: { args: Record<string, unknown> } }) =>
    (approveResume && isResumption(request.toolCall.args)) || runNeedsApproval(needsApproval, String(request.toolCall.args["code"]));
  return langchain.humanInTheLoopMiddleware({
    interruptOn: {
      run_code: { allowedDecisions: ["approve", "edit", "reject"], description: describeRunCode, when },
    },
  }) as unknown as AgentMiddleware;
}

/**
 * What the reviewer reads: the code, or for a resumption the calls the run waits on (from the
 * paused run_code result in the agent's messages) and the decisions the model proposes.
 */
function describeRunCode(toolCall: { args: Record<string, unknown> }, state: { messages?: unknown[] }): string {
  const args = toolCall.args;
  if (!isResumption(args)) return `The agent wants to run this code (run_code):\n${String(args["code"])}`;
  const resume = args["resume"] as { continuation?: unknown; decisions?: unknown };
  const paused = (state.messages ?? [])
    .map((m) => (m as { artifact?: { continuation?: unknown; runId?: unknown; pending?: PendingCall[] } }).artifact)
    .find((a) => a?.continuation !== undefined && a.continuation === resume.continuation);
  const what = paused?.pending ? explainPause(String(paused.runId), paused.pending) : "The agent wants to resume a paused run.";
  return `${what}\nThe agent proposes: ${JSON.stringify(resume.decisions)}`;
}
