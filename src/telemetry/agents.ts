/**
 * The gen_ai `invoke_agent` span of one agent call (the entry agent, or an agent called by
 * another): agent, depth, model, tokens. Its model requests and tool calls (runs, execute_tool)
 * are inside it.
 */
import { ATTR } from "./names.js";
import { inSpan, type Span } from "./spans.js";

export function traceAgentCall<T>(agent: string, depth: number, model: string | undefined, call: (span: Span | undefined) => Promise<T>): Promise<T> {
  const attributes: Record<string, string | number> = { [ATTR.genAiOperation]: "invoke_agent", [ATTR.genAiAgentName]: agent, [ATTR.agentDepth]: depth };
  if (model !== undefined) attributes[ATTR.genAiRequestModel] = model;
  return inSpan(`invoke_agent ${agent}`, attributes, call);
}

/** The tokens the call used, all its steps together. */
export function noteAgentUsage(span: Span | undefined, usage: { inputTokens?: number | undefined; outputTokens?: number | undefined }): void {
  if (!span) return;
  if (usage.inputTokens !== undefined) span.setAttribute(ATTR.genAiInputTokens, usage.inputTokens);
  if (usage.outputTokens !== undefined) span.setAttribute(ATTR.genAiOutputTokens, usage.outputTokens);
}
