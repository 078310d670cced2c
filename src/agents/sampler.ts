/**
 * A toolable sampling request answered by an AI SDK model: the tool's prompt (and system prompt,
 * temperature, stop sequences, token cap) become one generateText call, aborted with the tool call.
 * Used for agents (the calling agent's model, counted in its usage) and for `--sampler
 * provider:model` on `run`, `mcp` and `serve`.
 */
import type { LanguageModel } from "ai";
import type { Sampler, SampleRequest } from "../tools/adapters/toolable/host.js";

/** The longest completion handed back to a tool, as the MCP server's sampler bounds it. */
export const MAX_SAMPLE_CHARS = 100_000;

export function modelSampler(model: LanguageModel | (() => Promise<LanguageModel>)): Sampler {
  return async (req: SampleRequest) => {
    const { generateText } = await import("ai");
    const result = await generateText({
      model: typeof model === "function" ? await model() : model,
      prompt: req.prompt,
      maxOutputTokens: req.max_tokens,
      ...(req.system !== undefined ? { system: req.system } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.stop_sequences !== undefined ? { stopSequences: req.stop_sequences } : {}),
      abortSignal: req.signal,
    });
    return result.text.length > MAX_SAMPLE_CHARS ? result.text.slice(0, MAX_SAMPLE_CHARS) : result.text;
  };
}
