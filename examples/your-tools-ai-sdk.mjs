// Take your AI SDK tools, add code mode: the model writes code that calls them.
// Run from the repository after `npm run build`:  node examples/your-tools-ai-sdk.mjs
// The model here is the SDK's scripted MockLanguageModelV3, so the example runs offline; use your
// own (e.g. openai("gpt-4.1") from @ai-sdk/openai) and it writes the code itself.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { MockLanguageModelV3 } from "ai/test";

const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-your-tools-"));
process.on("exit", () => rmSync(base, { recursive: true, force: true }));
const forecast = { Oslo: 4, Rome: 19 };

// Two scripted steps: code that calls the user's tool twice at once, then the answer.
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const code = 'const [a, b] = await Promise.all(["Oslo", "Rome"].map((city) => tools.getWeather({ city })));\na.tempC > b.tempC ? a.city : b.city';
const steps = [
  () => ({ content: [{ type: "tool-call", toolCallId: "c1", toolName: "run_code", input: JSON.stringify({ code }) }], finishReason: { unified: "tool-calls", raw: undefined } }),
  ({ prompt }) => ({ content: [{ type: "text", text: `run_code said: ${prompt.at(-1).content[0].output.value}` }], finishReason: { unified: "stop", raw: undefined } }),
];
const model = new MockLanguageModelV3({ doGenerate: async (options) => ({ ...steps.shift()(options), usage, warnings: [] }) });

// --- docs: Vercel AI SDK ---
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { FileStorage, Session } from "ts-code-mode";
import { codeModeSystemPrompt, codeModeTools } from "ts-code-mode/ai";

// Your tools, as they are.
const tools = {
  getWeather: tool({
    description: "Get the weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, tempC: forecast[city] }),
  }),
};

// Add code mode: the code the model writes calls them as tools.getWeather({ city }).
const session = new Session({ storage: new FileStorage({ basePath: base }), tools });
const { text } = await generateText({
  model,
  tools: codeModeTools(session),
  system: await codeModeSystemPrompt(session),
  prompt: "Is it warmer in Oslo or in Rome?",
  stopWhen: stepCountIs(10),
});
console.log(text);
await session.close();
// --- end ---
