// Code mode as one tool of a Vercel AI SDK 6 agent loop.
// Run from the repository after `npm run build`:  node examples/ai-sdk.mjs
// The model here is the SDK's scripted MockLanguageModelV3, so the example runs offline; use your
// own (e.g. openai("gpt-4.1") from @ai-sdk/openai) and it writes the code itself.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MockLanguageModelV3 } from "ai/test";
import { FileStorage, Session, SubprocessExecutor } from "ts-code-mode";

const here = path.dirname(fileURLToPath(import.meta.url));
const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-ai-sdk-"));
const session = new Session({
  storage: new FileStorage({ basePath: base }),
  executor: new SubprocessExecutor({ toolsPath: path.join(here, "tools") }),
});
await session.start();
process.on("exit", () => rmSync(base, { recursive: true, force: true }));

// Two scripted steps: write a snippet for run_code, then answer with what it returned.
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const code = 'const found = await tools.search("print text", { limit: 1 });\n(await tools[found[0].name].say({ text: ["hello", "from", "code", "mode"] })).trim()';
const steps = [
  () => ({ content: [{ type: "tool-call", toolCallId: "c1", toolName: "run_code", input: JSON.stringify({ code }) }], finishReason: { unified: "tool-calls", raw: undefined } }),
  ({ prompt }) => ({ content: [{ type: "text", text: `run_code said: ${prompt.at(-1).content[0].output.value}` }], finishReason: { unified: "stop", raw: undefined } }),
];
const model = new MockLanguageModelV3({ doGenerate: async (options) => ({ ...steps.shift()(options), usage, warnings: [] }) });

// --- README: Vercel AI SDK ---
import { generateText, stepCountIs } from "ai";
import { codeModeSystemPrompt, codeModeTools } from "ts-code-mode/ai";

const { text } = await generateText({
  model,
  tools: codeModeTools(session), // run_code; { discovery: true } adds search_tools, describe_tool, search_workflows
  system: await codeModeSystemPrompt(session),
  prompt: "Say hello with one of the tools",
  stopWhen: stepCountIs(10),
});
console.log(text);
// --- end ---

await session.close();
