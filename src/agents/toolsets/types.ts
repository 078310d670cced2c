/**
 * A tool an agent can call, as plain data plus a function (the runtime wraps it with events and
 * approvals, then hands it to the AI SDK), and what a toolset gets to build its tools for one call.
 */
import type { z } from "zod";
import type { Session } from "../../session.js";
import type { AgentSpec } from "../files.js";

export interface AgentTool {
  name: string;
  description: string;
  /** zod schema of the arguments; the AI SDK sends it to the model as JSON Schema. */
  inputSchema: z.ZodType;
  /** Whether a call waits for approval unless the project overrides it. */
  needsApproval: boolean;
  execute(args: unknown, signal: AbortSignal): Promise<string>;
}

export interface ToolsetEnv {
  projectDir: string;
  cwd: string;
  /** This call's ts-code-mode session, started on first use and closed when the call ends. */
  session(): Promise<Session>;
  /** Longest text a tool returns to the model. */
  maxOutputChars: number;
  /** The agents this call's code may call (agents.*), for run_code's description. */
  callableAgents: AgentSpec[];
  /** The session's executor is a container (code_mode.executor "container"): commands run inside it. */
  containerSession?: boolean;
}
