/**
 * Scripted models for agent tests: AI SDK's MockLanguageModelV3 answering from a list of steps,
 * each either a tool call or a final text. Every request is recorded so tests can read what the
 * model was sent (its history, its tools).
 */
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";

export type Step = { text: string } | { tool: string; args: unknown } | { tools: Array<{ tool: string; args: unknown }> };

let ids = 0;

export function result(step: Step, inputTokens = 10, outputTokens = 5): LanguageModelV3GenerateResult {
  const calls = "tools" in step ? step.tools : "tool" in step ? [step] : [];
  return {
    content:
      "text" in step
        ? [{ type: "text", text: step.text }]
        : calls.map((c) => ({ type: "tool-call" as const, toolCallId: `call-${++ids}`, toolName: c.tool, input: JSON.stringify(c.args) })),
    finishReason: { unified: "text" in step ? "stop" : "tool-calls", raw: undefined },
    usage: {
      inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: outputTokens, text: outputTokens, reasoning: undefined },
    },
    warnings: [],
  };
}

/** A model that answers each request with the next step; past the end it answers "(script ended)". */
export function scripted(steps: Step[]): MockLanguageModelV3 & { prompts: LanguageModelV3CallOptions[] } {
  const queue = [...steps];
  const model = new MockLanguageModelV3({
    doGenerate: async () => result(queue.shift() ?? { text: "(script ended)" }),
  }) as MockLanguageModelV3 & { prompts: LanguageModelV3CallOptions[] };
  Object.defineProperty(model, "prompts", { get: () => model.doGenerateCalls });
  return model;
}

/** The text of every tool result the model was sent in its last request. */
export function toolResults(call: LanguageModelV3CallOptions | undefined): string[] {
  const out: string[] = [];
  for (const m of call?.prompt ?? []) {
    if (m.role !== "tool") continue;
    for (const part of m.content) {
      if (part.type !== "tool-result") continue;
      const o = part.output;
      out.push(o.type === "text" || o.type === "error-text" ? o.value : JSON.stringify(o));
    }
  }
  return out;
}
