/**
 * The `code` toolset: `run_code` on the call's ts-code-mode Session — the point of code mode: one
 * call, many steps, with tools/workflows/artifacts/deps in scope. It is the framework adapters'
 * run_code (src/adapters/core.ts: the MCP server's description, input and result text), so the
 * model reads the same tool through every door; only the session is started on first use.
 */
import { runCodeInput, runCodeSpec } from "../../adapters/core.js";
import type { ExecutionResult, PendingCall } from "../../execution/protocol.js";
import { RUN_CODE_DESCRIPTION } from "../../mcp/descriptions.js";
import { formatRunResult, type RunCodeOutput } from "../../mcp/format.js";
import type { Session } from "../../session.js";
import type { AgentSpec } from "../files.js";
import type { AgentTool, CodePause, ToolsetEnv } from "./types.js";

export function codeToolset(env: ToolsetEnv): AgentTool[] {
  return [
    {
      name: "run_code",
      description: RUN_CODE_DESCRIPTION + agentsDescription(env.callableAgents),
      inputSchema: runCodeInput,
      needsApproval: false,
      async execute(args, signal, call) {
        const session = await env.session();
        const reply = await runCodeSpec(session, env.maxOutputChars).execute(args as { code: string }, signal);
        const { status, runId, pending, continuation } = reply.structured as RunCodeOutput;
        if (!env.onPause || status !== "paused" || runId === undefined || !pending || continuation === undefined) return reply.text;
        // The model never sees the pause: the runtime has it decided (or suspends the agent run).
        return env.onPause(pauseOf(session, { runId, pending: pending as PendingCall[], continuation }, env.maxOutputChars, signal), call);
      },
    },
  ];
}

/** A paused run of `session`: its resume() goes on with decisions and answers run_code's reply (and the next pause, if it paused again). */
export function pauseOf(session: Session, paused: Omit<CodePause, "resume">, maxOutput: number, signal?: AbortSignal): CodePause {
  return {
    ...paused,
    async resume(decisions) {
      const result: ExecutionResult = await session.resume(paused.continuation, decisions, signal ? { signal } : {});
      const { text } = formatRunResult(result, maxOutput, "maxOutput");
      const { status, runId, pending, continuation } = result;
      if (status !== "paused" || runId === undefined || !pending || continuation === undefined) return { text, paused: null };
      return { text, paused: pauseOf(session, { runId, pending, continuation }, maxOutput, signal) };
    },
  };
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
