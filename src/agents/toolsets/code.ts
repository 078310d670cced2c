/**
 * The `code` toolset: `run_code` on the call's ts-code-mode Session — the point of code mode: one
 * call, many steps, with tools/workflows/artifacts/deps in scope. It is the framework adapters'
 * run_code (src/adapters/core.ts: the MCP server's description, input and result text), so the
 * model reads the same tool through every door; only the session is started on first use.
 */
import { runCodeInput, runCodeSpec } from "../../adapters/core.js";
import { RUN_CODE_DESCRIPTION } from "../../mcp/descriptions.js";
import type { AgentTool, ToolsetEnv } from "./types.js";

export function codeToolset(env: ToolsetEnv): AgentTool[] {
  return [
    {
      name: "run_code",
      description: RUN_CODE_DESCRIPTION,
      inputSchema: runCodeInput,
      needsApproval: false,
      async execute(args, signal) {
        const reply = await runCodeSpec(await env.session(), env.maxOutputChars).execute(args as { code: string }, signal);
        return reply.text;
      },
    },
  ];
}
