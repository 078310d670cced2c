/**
 * The footprint of each adapter's tool definitions, measured as each framework actually sends them
 * to its model (names, descriptions and JSON schemas): the same <= 4,000-character budget as the
 * MCP server's default surface. Progressive disclosure: what the session holds is found inside
 * run_code, never listed in the definitions, so they do not grow with the store.
 */
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { Agent, Runner, Usage, type Model, type ModelRequest } from "@openai/agents";
import { generateText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as aiAdapter from "../../src/adapters/ai.js";
import * as langchainAdapter from "../../src/adapters/langchain.js";
import * as agentsAdapter from "../../src/adapters/openai-agents.js";
import { codeModeSystemPrompt } from "../../src/adapters/core.js";
import { EXAMPLE_SKILLS, testSession, type TestSession } from "./session.js";

const BUDGET = 4_000;
let t: TestSession;
// A first run may build dist (the child runtime) on a busy machine.
beforeAll(async () => {
  t = await testSession();
}, 180_000);
afterAll(async () => {
  await t?.close();
});

/** What generateText sends to the provider as `tools`. */
async function aiSdkDefinitions(discovery: boolean, session = t.session): Promise<string> {
  const model = new MockLanguageModelV3({
    doGenerate: { content: [{ type: "text", text: "ok" }], finishReason: { unified: "stop", raw: undefined }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }, warnings: [] },
  });
  await generateText({ model, tools: aiAdapter.codeModeTools(session, { discovery }), prompt: "hi" });
  return JSON.stringify(model.doGenerateCalls[0]!.tools);
}

/** What the Agents SDK Runner hands its Model as `tools`. */
async function agentsDefinitions(discovery: boolean): Promise<string> {
  let tools: ModelRequest["tools"] = [];
  const model: Model = {
    async getResponse(request) {
      tools = request.tools;
      return { usage: new Usage(), output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "ok" }] }] };
    },
    // eslint-disable-next-line require-yield
    async *getStreamedResponse() {
      throw new Error("not streamed");
    },
  };
  await new Runner({ tracingDisabled: true }).run(new Agent({ name: "a", model, tools: agentsAdapter.codeModeTools(t.session, { discovery }) }), "hi");
  return JSON.stringify(tools);
}

/** The OpenAI function definitions a LangChain chat model binds. */
function langchainDefinitions(discovery: boolean): string {
  return JSON.stringify(langchainAdapter.codeModeTools(t.session, { discovery }).map((tool) => convertToOpenAITool(tool)));
}

describe("tool definitions footprint", () => {
  it.each([
    ["ai", aiSdkDefinitions],
    ["openai-agents", agentsDefinitions],
    ["langchain", async (d: boolean) => langchainDefinitions(d)],
  ] as const)("ts-code-mode/%s: run_code alone is within 4,000 characters; the discovery tools too", async (name, definitions) => {
    const code = await definitions(false);
    const withDiscovery = await definitions(true);
    console.log(`footprint ${name}: run_code ${code.length} characters; with discovery ${withDiscovery.length}`);
    expect(code).toContain("run_code");
    expect(code).toContain("tools.search");
    expect(code.length).toBeLessThanOrEqual(BUDGET);
    expect(withDiscovery).toContain("describe_tool");
    expect(withDiscovery.length).toBeLessThanOrEqual(BUDGET);
    // Nothing of what the session holds is in the definitions.
    expect(withDiscovery).not.toContain("echo");
  });
});

describe("skills: the catalog goes in the system prompt, never in the tool definitions", () => {
  it("a session with skills gets their <available_skills> catalog in codeModeSystemPrompt; the definitions stay the same size", async () => {
    const withSkills = await testSession({ skillRoots: [EXAMPLE_SKILLS] });
    try {
      const prompt = await codeModeSystemPrompt(withSkills.session);
      expect(prompt).toContain(await withSkills.session.skillsCatalog());
      expect(prompt).toContain("<available_skills>");
      expect(prompt).toContain("<name>\ncsv-summary\n</name>");
      expect(prompt).toContain("skills.load(name)");
      const definitions = await aiSdkDefinitions(true, withSkills.session);
      expect(definitions).not.toContain("csv-summary");
      expect(definitions.length).toBe((await aiSdkDefinitions(true)).length);
      expect(definitions.length).toBeLessThanOrEqual(BUDGET);
    } finally {
      await withSkills.close();
    }
  }, 120_000);

  it("a session without skills: no catalog and no skills paragraph", async () => {
    expect(await t.session.skillsCatalog()).toBe("");
    const prompt = await codeModeSystemPrompt(t.session);
    expect(prompt).not.toContain("available_skills");
    expect(prompt).not.toContain("Skills are");
  });
});
