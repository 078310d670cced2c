/**
 * A tool an agent can call, as plain data plus a function (the runtime wraps it with events and
 * approvals, then hands it to the AI SDK), and what a toolset gets to build its tools for one call.
 */
import type { z } from "zod";
import type { PendingCall } from "../../execution/protocol.js";
import type { Decision } from "../../runs/recorder.js";
import type { Session } from "../../session.js";
import type { AgentSpec } from "../files.js";

/** The model's tool call a tool is executing (the AI SDK's id), for what must refer to it later. */
export interface ToolCallRef {
  toolCallId: string;
}

export interface AgentTool {
  name: string;
  description: string;
  /** zod schema of the arguments; the AI SDK sends it to the model as JSON Schema. */
  inputSchema: z.ZodType;
  /** Whether a call waits for approval unless the project overrides it. */
  needsApproval: boolean;
  execute(args: unknown, signal: AbortSignal, call?: ToolCallRef): Promise<string>;
}

/** What run_code's reply says to the model: its text, and whether the run ended or paused again. */
export type CodeReply = { text: string; paused: null } | { text: string; paused: CodePause };

/** A durable code run that paused: the calls waiting for a decision, and how to go on. */
export interface CodePause {
  runId: string;
  pending: PendingCall[];
  continuation: string;
  /** Resumes the run with one decision per pending call (session.resume on the call's session). */
  resume(decisions: Decision[]): Promise<CodeReply>;
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
  /**
   * A durable code run paused for approvals: the runtime decides (asks, or suspends the agent run
   * for `agent run --resume`) and answers with what the model reads as run_code's result.
   */
  onPause?(pause: CodePause, call: ToolCallRef | undefined): Promise<string>;
}
