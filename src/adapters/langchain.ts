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
 * `codeModeApproval()` in `createAgent({ middleware, checkpointer })`. A pause *inside* the code
 * (durable sessions) becomes a LangGraph interrupt with `codeModePauses(session)`.
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
import { codeModeSystemPrompt, isResumption, resolveOptions, runCodeSpec, runNeedsApproval, toolSpecs, type CodeModeToolsOptions, type NeedsApproval, type ToolSpec } from "./core.js";
import { explainPause } from "../runs/durable.js";
import type { PendingCall } from "../execution/protocol.js";
import type { Decision } from "../runs/recorder.js";
import { loadPeer } from "./peer.js";
import type { Session } from "../session.js";
import { ValidationError } from "../errors.js";

const [core, langchain, langgraph] = await Promise.all([
  loadPeer<typeof import("@langchain/core/tools")>({ name: "@langchain/core/tools", adapter: "ts-code-mode/langchain", install: "@langchain/core@^1.4 langchain@^1.5" }),
  loadPeer<typeof import("langchain")>({ name: "langchain", adapter: "ts-code-mode/langchain", install: "@langchain/core@^1.4 langchain@^1.5" }),
  // langchain's own agents import it (its human-in-the-loop middleware calls interrupt()), so it is there with langchain.
  loadPeer<typeof import("@langchain/langgraph")>({ name: "@langchain/langgraph", adapter: "ts-code-mode/langchain", install: "@langchain/core@^1.4 langchain@^1.5" }),
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

/** What codeModePauses reads of a run_code ToolMessage's artifact (the structured result). */
interface PausedArtifact {
  status?: unknown;
  continuation?: unknown;
  pending?: PendingCall[];
}

/** One answer of LangChain's human-in-the-loop response (`{ decisions: [...] }`), as codeModePauses takes it. */
type HitlDecision = { type: "approve" } | { type: "edit"; editedAction?: { name?: string; args?: Record<string, unknown> } } | { type: "reject"; message?: string };

/**
 * A pause inside the code as a LangChain interrupt: when a run_code call of this step paused its
 * durable run, the agent stops before the model reads it, with LangGraph's `interrupt()` in the
 * shape of LangChain's human-in-the-loop middleware: one action request per pending call
 * (`tools.journal.pay` with its args, the reason as description). Resume with
 * `new Command({ resume: { decisions: [...] } })`, one per request in order: `{ type: "approve" }`,
 * `{ type: "edit", editedAction: { name, args } }` (the call runs with `args`) or
 * `{ type: "reject", message }` (the code's call throws a ToolError with the message). The run then
 * goes on from the ledger (calls before the pause are not made again) and its result replaces the
 * paused ToolMessage; the model reads only that. Needs a checkpointer on the agent. A run that
 * pauses again after a resume reaches the model as a pause (its resume call is then
 * codeModeApproval()'s to ask about): one interrupt per model step, since LangGraph re-runs a hook
 * from its start when resumed and the continuation of a second pause would be lost.
 */
export function codeModePauses(session: Session, options: { maxOutput?: number } = {}): AgentMiddleware {
  const { maxOutput } = resolveOptions({ ...options, approveResume: false });
  const runCode = runCodeSpec(session, maxOutput);
  return langchain.createMiddleware({
    name: "CodeModePauses",
    beforeModel: async (state: { messages: unknown[] }) => {
      const messages = state.messages;
      const lastModelTurn = messages.findLastIndex((m) => langchain.AIMessage.isInstance(m));
      const paused = messages
        .slice(lastModelTurn + 1)
        .filter((m): m is InstanceType<typeof langchain.ToolMessage> => langchain.ToolMessage.isInstance(m) && m.name === "run_code")
        .filter((m) => { const a = m.artifact as PausedArtifact | undefined; return a?.status === "paused" && typeof a.continuation === "string" && Array.isArray(a.pending); });
      if (paused.length === 0) return undefined;
      const pendingOf = (m: (typeof paused)[number]) => (m.artifact as PausedArtifact).pending ?? [];
      const calls = paused.flatMap(pendingOf);
      const request = {
        actionRequests: calls.map((p) => ({ name: callName(p), args: p.args, description: p.reason })),
        reviewConfigs: calls.map((p) => ({ actionName: callName(p), allowedDecisions: ["approve", "edit", "reject"] })),
      };
      // Nothing before the run resumes has side effects: LangGraph runs the hook again from its start
      // on each resume, answering the interrupts so far with the stored resume values. A malformed
      // answer is asked again (a new interrupt naming the problem) instead of failing the thread,
      // whose stored answer would fail it again on every later resume.
      let decisions: Decision[][] | undefined;
      let problem: string | undefined;
      while (!decisions) {
        const answer = (await langgraph.interrupt(problem ? { ...request, error: problem } : request)) as { decisions?: unknown } | undefined;
        try {
          decisions = toDecisions(paused.map(pendingOf), answer);
        } catch (err) {
          problem = err instanceof Error ? err.message : String(err);
        }
      }
      const replaced = [];
      for (const [i, m] of paused.entries()) {
        const continuation = String((m.artifact as PausedArtifact).continuation);
        const reply = await runCode.execute({ code: "(resume)", resume: { continuation, decisions: decisions[i]! } });
        replaced.push(new langchain.ToolMessage({ id: m.id, tool_call_id: m.tool_call_id, name: m.name, content: reply.text, artifact: { ...reply.structured, isError: reply.isError }, status: reply.isError ? "error" : "success" }));
      }
      return { messages: replaced };
    },
  }) as unknown as AgentMiddleware;
}

/** How a pending call is named to the reviewer: tools.journal.pay */
function callName(p: PendingCall): string {
  return `tools.${p.tool}${p.callable ? `.${p.callable}` : ""}`;
}

/** The human-in-the-loop answer (`{ decisions }`, one per pending call in order) as each paused run's decisions; throws what is wrong with it. */
function toDecisions(runs: PendingCall[][], answer: { decisions?: unknown } | undefined): Decision[][] {
  const answers = answer?.decisions;
  const ids = runs.flat().map((p) => p.id);
  if (!Array.isArray(answers) || answers.length !== ids.length) {
    throw new ValidationError(`codeModePauses: resume with { decisions: [...] }, one per pending call in order (${ids.length}: ${ids.join(", ")}); got ${JSON.stringify(answer)?.slice(0, 200)}`);
  }
  let next = 0;
  return runs.map((pending) => pending.map((p) => toDecision(p, answers[next++] as HitlDecision)));
}

/** One human-in-the-loop answer as the run's decision for pending call `p`. */
function toDecision(p: PendingCall, answer: HitlDecision): Decision {
  switch (answer?.type) {
    case "approve":
      return { id: p.id, decision: "approve" };
    case "edit": {
      const args = answer.editedAction?.args;
      if (typeof args !== "object" || args === null || Array.isArray(args)) throw new ValidationError(`codeModePauses: the edit of ${p.id} needs editedAction.args (the call's new arguments, an object)`);
      return { id: p.id, decision: "edit", args };
    }
    case "reject":
      return { id: p.id, decision: "reject", ...(typeof answer.message === "string" ? { reason: answer.message } : {}) };
    default:
      throw new ValidationError(`codeModePauses: the decision for ${p.id} must be { type: "approve" | "edit" | "reject" }; got ${JSON.stringify(answer)?.slice(0, 200)}`);
  }
}
