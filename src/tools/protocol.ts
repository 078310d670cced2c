/**
 * What every tool adapter (cli, mcp, http, toolable) provides to the registry. Parameters are
 * described in one small JSON-Schema-like shape so that discovery (`tools.describe`, signatures,
 * search) and argument validation work the same for every adapter.
 */
import type { JsonValue } from "../storage/protocol.js";

export type ParamType = "string" | "boolean" | "integer" | "number" | "array" | "object" | "unknown";

export interface ParamSpec {
  name: string;
  type: ParamType;
  /** Element type for arrays. */
  items?: ParamType;
  description?: string;
  required: boolean;
  default?: JsonValue;
  enum?: JsonValue[];
  /** Nested properties for objects (MCP inputSchema), when known. */
  properties?: ParamSpec[];
}

export interface CallableInfo {
  /** Recipe / MCP tool / endpoint name. */
  name: string;
  description: string;
  params: ParamSpec[];
  /** TypeScript type text of the resolved value, e.g. "string" or "unknown". */
  returns: string;
}

export type ToolType = "cli" | "mcp" | "http" | "toolable";

export interface ToolInfo {
  name: string;
  type: ToolType;
  description: string;
  tags: string[];
  callables: CallableInfo[];
  /** Parameters of the escape hatch `tools.<name>(args)`, or null when the tool has none. */
  direct: CallableInfo | null;
}

export interface CallContext {
  /** Milliseconds before the call is abandoned with a TIMEOUT ToolError. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Which executor's guest made the call ("in-process", "subprocess", ...); "host" for Session.callTool. */
  executor?: string;
  /** The run the call belongs to, so middleware can count or group calls per run. */
  runId?: string;
  /**
   * Stops the run's deadline until the returned function is called (e.g. while a human decides
   * on an approval). Absent outside runs and in executors that cannot pause their deadline.
   */
  holdDeadline?: () => () => void;
  /**
   * Where a command-line tool's argv runs when it is not the host: a container session runs it in
   * its container, so the tool sees the guest's files. Absent: on the host. A tool with
   * `runs_on: host` ignores it.
   */
  runCommand?: CommandRunner;
  /**
   * Present in a durable run (src/runs/): ends the run as paused with this call waiting for a
   * human's decision, instead of holding the process while they decide. The returned promise never
   * settles (the run is stopped and later re-run from its ledger).
   */
  pause?: (reason: string) => Promise<never>;
  /** The call was approved by a human's decision on a paused run: approval steps let it through. */
  approved?: boolean;
}

/** One command-line tool call, as a CommandRunner gets it. */
export interface CommandCall {
  tool: string;
  callable: string | null;
  timeoutMs: number;
  okExitCodes?: readonly number[];
  signal?: AbortSignal;
}

/** Runs argv (no shell) and resolves to its stdout; rejects with a ToolError like the host's runCommand. */
export type CommandRunner = (argv: readonly string[], call: CommandCall) => Promise<string>;

export interface ToolAdapter {
  readonly name: string;
  /** May connect (MCP) the first time; cached afterwards. */
  info(): Promise<ToolInfo>;
  /** `callable` null is the escape hatch. Throws ToolError. */
  call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown>;
  close(): Promise<void>;
  /** Why a call must wait for a human's decision (`needs_approval`), or null when it need not. */
  approvalNeeded?(callable: string | null): string | null;
  /** The call that undoes a call of `callable` with `args` that returned `result` (a `revert` declaration), or null. */
  revertOf?(callable: string | null, args: Record<string, unknown>, result: unknown): { callable: string | null; args: Record<string, unknown> } | null;
}
