/**
 * `provider:model` strings → AI SDK language models, through the SDK's provider registry. The
 * providers are imported on first use (importing ts-code-mode must not load the AI SDK), and the
 * API key is checked here so a missing one is an error naming the variable, the agent and its file.
 * `openai` uses the provider's default (the Responses API, /v1/responses); an OpenAI-compatible
 * endpoint declared under `providers` in project.json is called through /chat/completions, which
 * is what local model servers implement.
 */
import type { LanguageModel } from "ai";
import { INTEGRATION_PACKAGES, loadPeer } from "../adapters/peer.js";
import { AgentFileError } from "./locate.js";

export const BUILTIN_PROVIDERS = ["openai", "anthropic"] as const;

/** Where each built-in provider reads its key (and, for openai, an optional base URL). */
const KEY_ENV: Record<(typeof BUILTIN_PROVIDERS)[number], string> = { openai: "OPENAI_API_KEY", anthropic: "ANTHROPIC_API_KEY" };

export interface CompatibleProvider {
  base_url: string;
  api_key_env?: string | undefined;
}

export interface ModelRequest {
  model: string;
  /** For errors: the agent, its file and the line of its model. */
  agent: string;
  file: string;
  line: number;
  providers: Record<string, CompatibleProvider>;
  env: NodeJS.ProcessEnv;
}

export async function resolveModel(req: ModelRequest): Promise<LanguageModel> {
  const colon = req.model.indexOf(":");
  const providerName = req.model.slice(0, colon);
  const modelId = req.model.slice(colon + 1);
  const missing = (variable: string) =>
    new AgentFileError(req.file, req.line, `agent ${req.agent}: model ${req.model} needs the environment variable ${variable} (its API key), which is not set`);
  const { createProviderRegistry, customProvider } = await loadPeer<typeof import("ai")>(INTEGRATION_PACKAGES.ai);

  if (providerName === "openai") {
    const key = req.env[KEY_ENV.openai];
    if (!key) throw missing(KEY_ENV.openai);
    const { createOpenAI } = await loadPeer<typeof import("@ai-sdk/openai")>(INTEGRATION_PACKAGES.openai);
    const baseURL = req.env["OPENAI_BASE_URL"];
    const registry = createProviderRegistry({ openai: createOpenAI({ apiKey: key, ...(baseURL ? { baseURL } : {}) }) });
    return registry.languageModel(`openai:${modelId}`);
  }
  if (providerName === "anthropic") {
    const key = req.env[KEY_ENV.anthropic];
    if (!key) throw missing(KEY_ENV.anthropic);
    const { createAnthropic } = await loadPeer<typeof import("@ai-sdk/anthropic")>(INTEGRATION_PACKAGES.anthropic);
    const registry = createProviderRegistry({ anthropic: createAnthropic({ apiKey: key }) });
    return registry.languageModel(`anthropic:${modelId}`);
  }
  const compatible = req.providers[providerName];
  if (!compatible) throw new AgentFileError(req.file, req.line, `agent ${req.agent}: unknown model provider ${JSON.stringify(providerName)}`);
  let apiKey = "not-needed";
  if (compatible.api_key_env) {
    const key = req.env[compatible.api_key_env];
    if (!key) throw missing(compatible.api_key_env);
    apiKey = key;
  }
  const { createOpenAI } = await loadPeer<typeof import("@ai-sdk/openai")>(INTEGRATION_PACKAGES.openai);
  const openai = createOpenAI({ apiKey, baseURL: compatible.base_url, name: providerName });
  const provider = customProvider({ languageModels: { [modelId]: openai.chat(modelId) } });
  return createProviderRegistry({ [providerName]: provider }).languageModel(`${providerName}:${modelId}` as never);
}
