// Code mode as one tool of an OpenAI Agents SDK agent.
// Run from the repository after `npm run build`:  node examples/openai-agents.mjs
// The model here is a scripted `Model`, so the example runs offline; leave `model` out of the
// Agent (or name one, e.g. "gpt-4.1") and the SDK's OpenAI model writes the code itself.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTracingDisabled, Usage } from "@openai/agents";
import { FileStorage, Session, SubprocessExecutor } from "ts-code-mode";

const here = path.dirname(fileURLToPath(import.meta.url));
const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-openai-agents-"));
const session = new Session({
  storage: new FileStorage({ basePath: base }),
  executor: new SubprocessExecutor({ toolsPath: path.join(here, "tools") }),
});
await session.start();
process.on("exit", () => rmSync(base, { recursive: true, force: true }));
setTracingDisabled(true); // no traces sent from an offline example

// Two scripted turns: write a snippet for run_code, then answer with what it returned.
const code = 'const found = await tools.search("print text", { limit: 1 });\n(await tools[found[0].name].say({ text: ["hello", "from", "code", "mode"] })).trim()';
const turns = [
  () => [{ type: "function_call", callId: "c1", name: "run_code", arguments: JSON.stringify({ code }), status: "completed" }],
  ({ input }) => [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: `run_code said: ${input.at(-1).output.text ?? input.at(-1).output}` }] }],
];
const model = {
  async getResponse(request) {
    return { usage: new Usage(), output: turns.shift()(request) };
  },
  getStreamedResponse() {
    throw new Error("not streamed in this example");
  },
};

// --- README: OpenAI Agents ---
import { Agent, run } from "@openai/agents";
import { codeModeSystemPrompt, codeModeTools } from "ts-code-mode/openai-agents";

const agent = new Agent({
  name: "coder",
  model,
  instructions: await codeModeSystemPrompt(session),
  tools: codeModeTools(session), // { needsApproval: true } asks before each run_code (result.interruptions)
});
const result = await run(agent, "Say hello with one of the tools");
console.log(result.finalOutput);
// --- end ---

await session.close();
