/**
 * `--sampler provider:model` on `run`, `mcp` and `serve`: who answers a `type: toolable` tool's
 * sampling request (the tool asking for an LLM completion). The model is an agent model string
 * (`openai:<model>` with OPENAI_API_KEY and optional OPENAI_BASE_URL, `anthropic:<model>` with
 * ANTHROPIC_API_KEY). Without it, `run` and `serve` refuse sampling requests and `mcp` asks its
 * client; with it, `mcp` uses this model instead of asking the client.
 */
import { Option } from "commander";
import type { Sampler } from "../tools/adapters/toolable/host.js";
import { CliUsageError } from "./shared.js";

const MODEL = /^(openai|anthropic):[A-Za-z0-9._:/-]{1,200}$/;

export function samplerOption(): Option {
  return new Option("--sampler <provider:model>", "answer toolable tools' sampling requests with this model (openai:<model> or anthropic:<model>; key from OPENAI_API_KEY / ANTHROPIC_API_KEY)");
}

/** The sampler --sampler names, its API key checked now (a missing key is a usage error, exit 2); undefined without the flag. */
export async function samplerFromFlag(model: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<Sampler | undefined> {
  if (model === undefined) return undefined;
  if (!MODEL.test(model)) throw new CliUsageError(`--sampler ${JSON.stringify(model)}: expected provider:model with provider openai or anthropic, e.g. --sampler openai:gpt-4o-mini`);
  const { resolveModel } = await import("../agents/models.js");
  const { modelSampler } = await import("../agents/sampler.js");
  try {
    const resolved = await resolveModel({ model, agent: "--sampler", file: "--sampler", line: 1, providers: {}, env });
    return modelSampler(resolved);
  } catch (err) {
    // resolveModel words its errors for agent files; the user wrote a flag.
    const problem = (err as { problem?: unknown }).problem;
    const message = typeof problem === "string" ? problem.replace(/^agent --sampler: /, "") : err instanceof Error ? err.message : String(err);
    throw new CliUsageError(`--sampler: ${message}`);
  }
}
