/**
 * `ts-code-mode/ai`: code mode as Vercel AI SDK 6 tools.
 *
 * ```ts
 * const result = await generateText({ model, tools: codeModeTools(session), system: await codeModeSystemPrompt(session), prompt, stopWhen: stepCountIs(10) });
 * ```
 *
 * run_code's output is the run's result trimmed for a model: `text` (what the model reads, via
 * `toModelOutput`; a failed run is sent as an error result) and `structured` (the same data for
 * programs and UIs). `needsApproval` maps to the SDK's own tool approval: the step ends with a
 * `tool-approval-request` and the code runs only after a `tool-approval-response` approves it.
 */
import type { Tool, ToolSet } from "ai";
import { codeModeSystemPrompt, resolveOptions, runNeedsApproval, toolSpecs, type CodeModeToolsOptions, type RunCodeInput, type RunCodeReply, type ToolReply, type ToolSpec } from "./core.js";
import { loadPeer } from "./peer.js";
import type { Session } from "../session.js";

const ai = await loadPeer<typeof import("ai")>({ name: "ai", adapter: "ts-code-mode/ai", install: "ai@^6" });

export { codeModeSystemPrompt, type CodeModeToolsOptions, type RunCodeInput, type RunCodeReply, type ToolReply };
export { MissingPeerError } from "./peer.js";

/** The tools by name: run_code always; search_tools, describe_tool and search_workflows with `discovery: true`. */
export type CodeModeToolSet = ToolSet & { run_code: Tool<RunCodeInput, RunCodeReply> };

/** AI SDK tools for `generateText` / `streamText` / `Agent`, backed by `session` (started by you, closed by you). */
export function codeModeTools(session: Session, options: CodeModeToolsOptions = {}): CodeModeToolSet {
  const resolved = resolveOptions(options);
  const tools: Record<string, Tool<never, ToolReply>> = {};
  for (const spec of toolSpecs(session, resolved)) {
    const isRunCode = spec.name === "run_code";
    tools[spec.name] = toAiTool(spec, isRunCode && resolved.needsApproval !== false ? (input) => runNeedsApproval(resolved.needsApproval, String(input["code"])) : undefined);
  }
  return tools as CodeModeToolSet;
}

function toAiTool(spec: ToolSpec, needsApproval: ((input: Record<string, unknown>) => Promise<boolean>) | undefined): Tool<never, ToolReply> {
  const t = ai.tool<Record<string, unknown>, ToolReply>({
    description: spec.description,
    inputSchema: spec.inputSchema,
    execute: (input, { abortSignal }) => spec.execute(input, abortSignal),
    // The model reads the text; a failed run is an error result, as MCP's isError.
    toModelOutput: ({ output }) => (output.isError ? { type: "error-text", value: output.text } : { type: "text", value: output.text }),
    ...(needsApproval ? { needsApproval } : {}),
  });
  return t as unknown as Tool<never, ToolReply>;
}
