/**
 * A toolable sampling request answered by an AI SDK model: the tool's prompt (and system prompt,
 * temperature, stop sequences, token cap) become one generateText call, aborted with the tool call.
 * Used for agents (the calling agent's model, counted in its usage) and for `--sampler
 * provider:model` on `run`, `mcp` and `serve`.
 */
import type { LanguageModel } from "ai";
import { INTEGRATION_PACKAGES, loadPeer } from "../adapters/peer.js";
import { boundedSample, type Sampler, type SampleRequest } from "../tools/adapters/toolable/host.js";

export function modelSampler(model: LanguageModel | (() => Promise<LanguageModel>)): Sampler {
  return async (req: SampleRequest) => {
    const { generateText } = await loadPeer<typeof import("ai")>(INTEGRATION_PACKAGES.ai);
    const result = await generateText({
      model: typeof model === "function" ? await model() : model,
      prompt: req.prompt,
      maxOutputTokens: req.max_tokens,
      ...(req.system !== undefined ? { system: req.system } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.stop_sequences !== undefined ? { stopSequences: req.stop_sequences } : {}),
      abortSignal: req.signal,
    });
    return boundedSample(result.text);
  };
}
