/**
 * The `code` toolset: `run_code` on the call's ts-code-mode Session — the point of code mode: one
 * call, many steps, with tools/workflows/artifacts/deps in scope. The description and the result
 * text are the MCP server's, so the model reads the same thing through either door.
 */
import { z } from "zod";
import { RUN_CODE_DESCRIPTION } from "../../mcp/descriptions.js";
import { formatRunResult } from "../../mcp/format.js";
import type { AgentTool, ToolsetEnv } from "./types.js";

export function codeToolset(env: ToolsetEnv): AgentTool[] {
  return [
    {
      name: "run_code",
      description: RUN_CODE_DESCRIPTION,
      inputSchema: z.object({ code: z.string().min(1).describe("TypeScript to run; the last expression's value is returned") }),
      needsApproval: false,
      async execute(args, signal) {
        const { code } = args as { code: string };
        const session = await env.session();
        const result = await session.run(code, { signal });
        return formatRunResult(result, env.maxOutputChars).text;
      },
    },
  ];
}
