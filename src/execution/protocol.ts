/**
 * The executor contract. Every executor (in-process, subprocess, sandbox, container) implements
 * `Executor` and keeps one promise: `run()` never throws for a problem in the agent's code; the
 * problem comes back in `ExecutionResult.error` and the executor stays usable.
 */
import type { StorageBackend } from "../storage/protocol.js";
import type { TrustLevel } from "../workflows/provenance.js";
import type { HostServices } from "./host.js";
import type { CallContext } from "../tools/protocol.js";
import type { OutputListener } from "./output-stream.js";

export type Capability =
  | "timeout"
  | "processIsolation"
  | "networkIsolation"
  | "filesystemIsolation"
  | "memoryLimit"
  | "reset"
  | "depsInstall";

export const ALL_CAPABILITIES: readonly Capability[] = [
  "timeout",
  "processIsolation",
  "networkIsolation",
  "filesystemIsolation",
  "memoryLimit",
  "reset",
  "depsInstall",
];

export interface ExecutionError {
  /** Stable: SyntaxError, ReferenceError, TypeError, TimeoutError, ToolError, MemoryLimitError, ... */
  name: string;
  message: string;
  stack?: string;
}

export interface ExecutionResult {
  ok: boolean;
  /** Value of the last expression statement (a structured-clone copy); undefined if none or not cloneable. */
  value: unknown;
  /** Readable, bounded rendering of the value for an LLM. Strings are shown as-is. */
  display: string;
  stdout: string;
  stderr: string;
  error: ExecutionError | null;
  durationMs: number;
  /** Durable runs (src/runs/) only: the run's id in the ledger. */
  runId?: string;
  /** Durable runs only: "paused" when calls wait for a human's decision (then ok is false). */
  status?: "completed" | "failed" | "paused";
  /** Paused: the calls waiting for a decision. */
  pending?: PendingCall[];
  /** Paused: what `session.resume(continuation, decisions)` takes, in any process sharing the storage. */
  continuation?: string;
}

/** A call a paused durable run waits on: decide it by `id` (approve, edit its args, or reject). */
export interface PendingCall {
  id: string;
  /** The tool's name (pending calls are tool calls). */
  tool: string;
  /** Its recipe / MCP tool / endpoint; null for the escape hatch. */
  callable: string | null;
  args: unknown;
  /** Why it needs a decision (the tool's needs_approval text, or the approver's). */
  reason: string;
}

export interface RunOptions {
  /** Overrides the executor's default timeout for this run. */
  timeoutMs?: number;
  /**
   * Stops the run when aborted, the same way a timeout does; the result's error is named
   * `CancelledError`. What can be stopped is what a timeout can stop (see `capabilities()`): the
   * subprocess and deno sandbox stop anything (by restarting the process); the QuickJS sandbox
   * stops code between its slices (a promise loop, waiting code), but a synchronous loop only at
   * its deadline; the in-process executor abandons a run that is waiting or awaiting timers, but
   * synchronous code (or a microtask loop) blocks the host's event loop, so the abort is seen only
   * when it yields.
   */
  signal?: AbortSignal;
  /**
   * Told the run's stdout/stderr while it runs, in batches (see output-stream.ts); the result still
   * carries the whole (capped) output. What is streamed is bounded by the same caps.
   */
  onOutput?: OutputListener;
  /**
   * The id namespace calls of this run carry (`CallContext.runId`); default a fresh UUID. A durable
   * run (src/runs/) sets it so its ledger hook knows the run's calls.
   */
  runId?: string;
  /**
   * One line of plain JavaScript (not prepared: no TypeScript) run just before the code, in the
   * same realm and turn, on the script's first line. A durable run's replay prologue goes here
   * rather than into the code: the code's preparation then stays cached by its own text, and the
   * prologue is never parsed as TypeScript. For executors whose `runsPreludes` is true, and only in
   * TypeScript guests (a Python guest refuses a run with a prelude).
   */
  prelude?: string;
}

/** Honest notes on what a capability does and does not cover in this executor. */
export interface CapabilityReport {
  capabilities: Capability[];
  notes: string[];
}

export interface Executor {
  /** "in-process" | "subprocess" | ... */
  readonly kind: string;
  /**
   * Whose code this executor runs: "trusted" when it gives the code authority (in-process,
   * subprocess), "untrusted" when it exists to contain it (sandbox, container). Workflows saved
   * through it are recorded with this level (see src/workflows/provenance.ts). Absent: untrusted.
   */
  readonly trust?: TrustLevel;
  /** `run()` honours `RunOptions.prelude` (absent: it does not, and a caller must put it in the code). */
  readonly runsPreludes?: boolean;
  capabilities(): CapabilityReport;
  /** Bind to storage and start. Called once by Session.start(). */
  start(storage: StorageBackend): Promise<void>;
  /**
   * Optional: given the first run's code while start() is under way, does what that run will need
   * first (e.g. prepares the code), so it overlaps the guest's start-up. Never throws; whatever it
   * finds wrong the run reports.
   */
  prepareAhead?(code: string): void;
  run(code: string, options?: RunOptions): Promise<ExecutionResult>;
  /** Forget variables; namespaces and stored data remain. */
  reset(): Promise<void>;
  /** Idempotent. */
  close(): Promise<void>;
  /** The host-side services (tools, workflows, artifacts, deps) this executor exposes; set after start(). */
  readonly host: HostFacade | null;
}

/**
 * What Session needs of an executor's host services. HostServices provides it in process; a
 * RemoteExecutor provides it over HTTP (the services then live on the server).
 */
export interface HostFacade {
  readonly tools: Pick<HostServices["tools"], "list" | "search" | "describe" | "call">;
  readonly workflows: Pick<HostServices["workflows"], "list" | "search" | "get" | "create" | "delete" | "approve" | "setUntrustedWorkflowPolicy" | "index">;
  readonly skills: Pick<HostServices["skills"], "list" | "load" | "catalog">;
  dispatch(ns: string, op: string, args: readonly unknown[], ctx?: CallContext): Promise<unknown>;
  /** The guest's language: tools.describe answers in it. */
  readonly language: HostServices["language"];
  /** The folder of tool YAML this host reads (undefined: none; a remote host does not say). */
  readonly toolsPath?: string | undefined;
}

/** Runtime check for values that reach Session from user code. */
export function isExecutor(value: unknown): value is Executor {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Partial<Executor>;
  return typeof v.run === "function" && typeof v.start === "function" && typeof v.close === "function";
}
