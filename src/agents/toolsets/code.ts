/**
 * The `code` toolset: `run_code` on the call's ts-code-mode Session — the point of code mode: one
 * call, many steps, with tools/workflows/artifacts/deps in scope. It is the framework adapters'
 * run_code (src/adapters/core.ts: the MCP server's description, input and result text), so the
 * model reads the same tool through every door; only the session is started on first use.
 */
import { runCodeInput, runCodeSpec } from "../../adapters/core.js";
import { RUN_CODE_DESCRIPTION } from "../../mcp/descriptions.js";
import type { AgentSpec } from "../files.js";
import type { AgentTool, ToolsetEnv } from "./types.js";

export function codeToolset(env: ToolsetEnv): AgentTool[] {
  return [
    {
      name: "run_code",
      description: RUN_CODE_DESCRIPTION + agentsDescription(env.callableAgents),
      inputSchema: runCodeInput,
      needsApproval: false,
      async execute(args, signal) {
        const reply = await runCodeSpec(await env.session(), env.maxOutputChars).execute(args as { code: string }, signal);
        return reply.text;
      },
    },
  ];
}

/** How run_code's code calls the agents it may call: each one's description and input. */
function agentsDescription(agents: AgentSpec[]): string {
  if (!agents.length) return "";
  const lines = [
    "",
    "- agents: other agents, each call a separate agent run (it starts with no memory of this conversation):",
    "  await agents.<name>({ input, attachments? }) answers with the agent's result (its text, or an object when it declares an output schema).",
    "  Calls run in parallel with Promise.all, e.g. await Promise.all(files.map((f) => agents.analyst({ input: { file: f } }))).",
  ];
  for (const a of agents) {
    const input = a.input ? JSON.stringify(a.input) : "a string saying what you want";
    const output = a.output ? `; answers ${JSON.stringify(a.output)}` : "; answers text";
    lines.push(`  - agents.${a.name}: ${a.description.slice(0, 500)} (input: ${input.slice(0, 1_000)}${output.slice(0, 1_000)})`);
  }
  return lines.join("\n");
}
