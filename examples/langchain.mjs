// Code mode as one tool of a LangChain.js agent (createAgent).
// Run from the repository after `npm run build`:  node examples/langchain.mjs
// The model here is LangChain's scripted fakeModel(), so the example runs offline; use your own
// (e.g. "openai:gpt-4.1" with @langchain/openai installed) and it writes the code itself.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AIMessage, fakeModel } from "langchain";
import { FileStorage, Session, SubprocessExecutor } from "ts-code-mode";

const here = path.dirname(fileURLToPath(import.meta.url));
const base = mkdtempSync(path.join(tmpdir(), "ts-code-mode-langchain-"));
const session = new Session({
  storage: new FileStorage({ basePath: base }),
  executor: new SubprocessExecutor({ toolsPath: path.join(here, "tools") }),
});
await session.start();
process.on("exit", () => rmSync(base, { recursive: true, force: true }));

// Two scripted turns: write a snippet for run_code, then answer with what it returned.
const code = 'const found = await tools.search("print text", { limit: 1 });\n(await tools[found[0].name].say({ text: ["hello", "from", "code", "mode"] })).trim()';
const model = fakeModel()
  .respondWithTools([{ name: "run_code", args: { code }, id: "c1" }])
  .respond((messages) => new AIMessage(`run_code said: ${messages.at(-1).content}`));

// --- README: LangChain ---
import { createAgent } from "langchain";
import { codeModeSystemPrompt, codeModeTools } from "ts-code-mode/langchain";

const agent = createAgent({
  model,
  tools: codeModeTools(session), // approval: middleware: [codeModeApproval()] plus a checkpointer
  systemPrompt: await codeModeSystemPrompt(session),
});
const { messages } = await agent.invoke({ messages: [{ role: "user", content: "Say hello with one of the tools" }] });
console.log(messages.at(-1).content);
// --- end ---

await session.close();
