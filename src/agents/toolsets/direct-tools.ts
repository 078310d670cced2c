/**
 * The `tools` toolset: each ts-code-mode tool callable as a plain tool call (`<tool>__<callable>`),
 * for models that do better with one JSON call at a time than with run_code. Arguments are checked
 * by the tool registry (the same validation run_code's calls get), so the schema here is open.
 */
import { z } from "zod";
import { renderValue } from "../../values/display.js";
import type { AgentTool, ToolsetEnv } from "./types.js";

/** Model APIs accept at most a few hundred tools and read every description on each request. */
const MAX_DIRECT_TOOLS = 64;

export async function directToolset(env: ToolsetEnv): Promise<AgentTool[]> {
  const session = await env.session();
  const out: AgentTool[] = [];
  for (const tool of await session.listTools()) {
    const entries: Array<{ callable: string | null; description: string; signature: string }> = tool.callables.map((c) => ({ callable: c.name, ...c }));
    if (tool.direct) entries.push({ callable: null, ...tool.direct });
    for (const e of entries) {
      if (out.length >= MAX_DIRECT_TOOLS) return out;
      const name = `${tool.name}${e.callable === null ? "" : `__${e.callable}`}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
      out.push({
        name,
        description: `${e.description}\nSignature: ${e.signature}`.slice(0, 2_000),
        inputSchema: z.record(z.string(), z.unknown()),
        needsApproval: false,
        async execute(args) {
          const value = await session.callTool(tool.name, e.callable, args as Record<string, unknown>);
          return typeof value === "string" ? value.slice(0, env.maxOutputChars) : renderValue(value, env.maxOutputChars);
        },
      });
    }
  }
  return out;
}
