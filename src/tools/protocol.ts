/**
 * What every tool adapter (cli, mcp, http, openapi, toolable) provides to the registry. Parameters are
 * described in one small JSON-Schema-like shape so that discovery (`tools.describe`, signatures,
 * search) and argument validation work the same for every adapter.
 */
import type { Readable, Writable } from "node:stream";
import type { JsonValue } from "../storage/protocol.js";
import type { TraceContext } from "../telemetry/trace-context.js";

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
  /**
   * Arguments not listed in `params` are passed on instead of refused: the tool checks them itself
   * (a code tool whose schema library cannot describe its schema as JSON Schema).
   */
  open?: boolean;
}

/** "code": defined in the host program (defineTool, AI SDK tools, an MCP client, a tool source). */
export type ToolType = "cli" | "mcp" | "http" | "openapi" | "toolable" | "code";

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
  /**
   * When the run's time runs out (epoch ms, Date.now()'s clock); absent outside runs and while the
   * deadline is held. Storage writes of the call are fenced by it (storage/write-deadline.ts).
   */
  deadline?: number;
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
   * Where command-line tools and toolable executables run when it is not the host: a container
   * session runs them in its container, so they see the guest's files. Absent: on the host. A tool
   * with `runs_on: host` ignores it.
   */
  place?: CommandPlace;
  /** The run's OpenTelemetry context (telemetry/spans.ts): the parent of the call's span. Absent without an SDK. */
  trace?: TraceContext;
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
  /** stdout past this many bytes stops the program (default 16 MiB). */
  maxStdoutBytes?: number;
  /** How messages name the call (default `tools.<tool>[.<callable>]`). */
  label?: string;
}

/** Runs argv (no shell) and resolves to its stdout; rejects with a ToolError like the host's runCommand. */
export type CommandRunner = (argv: readonly string[], call: CommandCall) => Promise<string>;

/** How a started program ended. */
export interface ProgramExit {
  /** Exit code; null when it was killed by a signal or could not start. */
  code: number | null;
  signal: string | null;
  /** Set when the program could not start (code "ENOENT": not there; "EACCES": not executable). */
  startError?: { code: string; message: string };
}

/** A program started by a ProgramSpawner: its three streams, its end, and a kill for its whole process group. */
export interface RunningProgram {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles (never rejects) once the program exited and its output ended. */
  readonly exit: Promise<ProgramExit>;
  /** SIGKILL the program's process group now (idempotent). */
  kill(): void;
  /** The host process id, for a program on the host. */
  readonly pid?: number | undefined;
}

export interface ProgramOptions {
  /** Working directory; default the place's own (the host: this process's; a container: its workdir). */
  cwd?: string;
  /** The whole environment on the host; added to the container's own inside one. */
  env?: Record<string, string>;
}

/** Starts argv (no shell) with stdin, stdout and stderr as pipes; spawn failures arrive in `exit`, never as a throw. */
export type ProgramSpawner = (argv: readonly string[], options: ProgramOptions) => RunningProgram;

/**
 * Where a session runs commands (a container session's container): one place for CLI tools
 * (`run`), toolable executables (`spawn`, streaming) and skill scripts, so they all see the files
 * the guest sees.
 */
export interface CommandPlace {
  /** For messages and descriptions, e.g. "the container (image localhost/x:1)". */
  readonly where: string;
  readonly run: CommandRunner;
  readonly spawn: ProgramSpawner;
  /** How to add a missing command to the place, for error messages (e.g. "ts-code-mode image build --with X"). */
  fixFor(command: string): string;
}

export interface ToolAdapter {
  readonly name: string;
  /** May connect (MCP) the first time; cached afterwards. */
  info(): Promise<ToolInfo>;
  /**
   * `info()` when it is known without I/O, else undefined. Optional: a tool that answers in
   * microseconds (code tools) spares each call the two promises of awaiting info().
   */
  infoNow?(): ToolInfo | undefined;
  /** `callable` null is the escape hatch. Throws ToolError. */
  call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown>;
  /**
   * The other callables of this tool that would run exactly what this call runs (a CLI tool: the
   * recipes that can produce the same argv), so a rule written for one of them also covers the
   * escape hatch or another recipe reaching the same command. Absent: calls differ by name alone.
   */
  sameCommandAs?(callable: string | null, args: Record<string, unknown>): string[];
  close(): Promise<void>;
  /** Why a call must wait for a human's decision (`needs_approval`), or null when it need not. */
  approvalNeeded?(callable: string | null): string | null;
  /** The call that undoes a call of `callable` with `args` that returned `result` (a `revert` declaration), or null. */
  revertOf?(callable: string | null, args: Record<string, unknown>, result: unknown): { callable: string | null; args: Record<string, unknown> } | null;
}
