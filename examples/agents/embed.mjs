// Embedding the agent runner: run this folder's project with your own approval UI and event log.
// Needs OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server). From the repository,
// after `npm run build`:  node examples/agents/embed.mjs 'How many words are in the notes?'
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runAgent } from "ts-code-mode";

const here = path.dirname(fileURLToPath(import.meta.url));
// The analyst's run_code calls CLI tools with paths relative to the working directory.
process.chdir(here);

const result = await runAgent(here, process.argv[2] ?? "How many words are in the notes?", {
  // Your UI decides; here every call is approved and logged. Other answers:
  // { kind: "approve_session" }, { kind: "edit", args }, { kind: "reject", reason }.
  onApproval: async ({ agent, tool }) => {
    console.log(`approved: ${agent} → ${tool}`);
    return { kind: "approve" };
  },
  onEvent: ({ agent, depth, event }) => {
    if (event.type === "tool_call") console.log(`${"  ".repeat(depth)}${agent} → ${event.tool}`);
  },
});
console.log(`answer: ${result.answer}`);
console.log(`usage: ${JSON.stringify(result.usage.total)}`);
