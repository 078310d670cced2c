/**
 * SandboxExecutor: the agent's code runs in QuickJS, a JavaScript engine compiled to WebAssembly,
 * inside the host process. The guest has JavaScript's builtins, `console`, timers and the four
 * namespaces — nothing else: no modules, files, network, environment or processes. Every namespace
 * call crosses as copied data to the one host-side RpcProvider, so validation, tool middleware and
 * run budgets are those of every other executor.
 *
 *   - timeout: QuickJS's interrupt handler stops runaway code (sync loops, async loops, timers) at
 *     the deadline and variables are kept when nothing of the stopped run is left queued; a
 *     watchdog stops a long native operation that the interrupt handler cannot reach, and then the
 *     sandbox is restarted (variables lost). A run never outlives its deadline by more than
 *     HARD_STOP_GRACE_MS.
 *   - memoryMb caps the sandbox's whole WebAssembly memory; running out is a MemoryLimitError and
 *     the next run gets a fresh sandbox.
 *   - maxToolCallsPerRun is counted by the host (HostServicesOptions); maxOutputBytes caps each console stream.
 *   - reset() replaces the sandbox; close() drops it and aborts calls in flight.
 *
 * engine "deno" runs the code in V8 inside a separate `deno` process with no permissions instead
 * (see deno/engine.ts): a process boundary and V8 speed, for a process start and the optional
 * dependency `deno`. This class then forwards everything to that engine.
 */
import { admitRun } from "../admit.js";
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { ValidationError } from "../../errors.js";
import type { SearchOptions } from "../../search/config.js";
import { SerialQueue } from "../../serial-queue.js";
import type { StorageBackend } from "../../storage/protocol.js";
import type { ToolMiddleware } from "../../tools/middleware/types.js";
import type { ToolRegistry } from "../../tools/registry.js";
import { toolsOption, type CodeToolSet, type CodeToolsInput } from "../../tools/code/tool-set.js";
import { HostServices, type HostServicesOptions } from "../host.js";
import { baseOptionsShape, DEFAULT_TIMEOUT_MS, hostLimitsOf, parseOptions } from "../options.js";
import type { RunOutput } from "../output.js";
import type { CapabilityReport, ExecutionError, ExecutionResult, Executor, RunOptions } from "../protocol.js";
import { errorResult } from "../result.js";
import { RpcProvider } from "../rpc/provider.js";
import { RunBudget } from "../run-budget.js";
import { toWireError } from "../wire-error.js";
import { CallRouter, type CallOrigin } from "./calls.js";
import type { Decoded } from "./codec.js";
import type { DenoEngine, DenoEngineConfig } from "./deno/engine.js";
import type { EncodedReply, InstanceHooks, InstanceLimits, ReportKind, SandboxInstance } from "./instance.js";
import { memoryError, poisonError, thrownError, timeoutError, uncaughtError, unencodableFields, valueFields } from "./outcome.js";
import { CANCELLED_ERROR_NAME, cancelledError, onAbort, streamerFor } from "../output-stream.js";
import { recordExecutorRestart } from "../../telemetry/metrics.js";
import type { GuestConsole } from "../output.js";
import { createSandboxConsole, DEFAULT_MAX_OUTPUT_BYTES, newRunOutput } from "./output.js";
import { MAX_MEMORY_MB, MIN_MEMORY_MB } from "./memory-limits.js";

/**
 * Each engine's code is imported when a sandbox of that engine first starts (issue 42, cold start):
 * QuickJS (~100 KB with its guest bundle) and the deno driver are neither needed nor loaded by a
 * process that imports the package and runs another executor.
 */
type QuickJs = typeof import("./quickjs.js");
let quickjs: QuickJs | undefined;
async function loadQuickJs(): Promise<QuickJs> {
  return (quickjs ??= await import("./quickjs.js"));
}

export interface SandboxExecutorOptions {
  /**
   * The engine running the code: "quickjs" (the default; WebAssembly inside the host process) or
   * "deno" (V8 in a `deno` process without permissions; needs the optional dependency `deno`).
   */
  engine?: "quickjs" | "deno";
  /**
   * The agent's language: "typescript" (default) or "python" — Python runs in Pyodide inside the
   * deno engine (which it implies), the process reading nothing but Pyodide's own files.
   */
  language?: "typescript" | "python";
  /** Folder of tool YAML files (`tools.*`). */
  toolsPath?: string;
  /**
   * Tools defined in code — `[defineTool(...)]`, `{ weather: tool(...) }`, `{ github: { createIssue } }`,
   * an MCP client or server parameters (see tools/code/tool-set.ts) — beside the YAML tools of
   * `toolsPath`; they run on the host. Or a ready ToolRegistry, which wins over `toolsPath`.
   */
  tools?: ToolRegistry | CodeToolsInput;
  /** Timeout of a run that gives none; default 30 s. */
  defaultTimeoutMs?: number;
  /** Cap on the sandbox's memory in MB (QuickJS: its whole memory; deno: V8's heap; python: the process's resident memory beyond Pyodide's own); default 256, from 32 to 2048. */
  memoryMb?: number;
  /** Cap on each of stdout and stderr per run, in bytes of UTF-8; default 1,000,000. */
  maxOutputBytes?: number;
  /** Most tool calls one run may make (counted before any middleware, as callsPerRun would); default 1000. */
  maxToolCallsPerRun?: number;
  /** Tool middleware applied on the host to every tool call (see tools/middleware). */
  middleware?: ToolMiddleware[];
  /** How tools.search / workflows.search rank (see ExecutorOptions.search). */
  search?: SearchOptions;
  /** Bytes the session's namespace calls may hold in the host at once (see ExecutorOptions.maxInFlightBytes; default 256 MiB). */
  maxInFlightBytes?: number;
  /** Read-only folders of Agent Skills (see ExecutorOptions.skillRoots). */
  skillRoots?: string[];
}

const optionsShape = lazy(() => ({
  ...baseOptionsShape,
  engine: z.enum(["quickjs", "deno"], { error: 'must be "quickjs" or "deno"' }).optional(),
  language: z.enum(["typescript", "python"], { error: 'must be "typescript" or "python"' }).optional(),
  memoryMb: z
    .number({ error: "must be a number of megabytes" })
    .int("must be a whole number of megabytes")
    .min(MIN_MEMORY_MB, `must be at least ${MIN_MEMORY_MB} MB`)
    .max(MAX_MEMORY_MB, `must be at most ${MAX_MEMORY_MB} MB (the WebAssembly engine's limit)`)
    .optional(),
  maxOutputBytes: z.number({ error: "must be a number of bytes" }).int("must be a whole number of bytes").min(1_000, "must be at least 1000 bytes").max(1_073_741_824).optional(),
  maxToolCallsPerRun: z.number({ error: "must be a number" }).int("must be a whole number").min(1, "must be at least 1").max(1_000_000).optional(),
}));

export const DEFAULT_MEMORY_MB = 256;
export const DEFAULT_MAX_TOOL_CALLS_PER_RUN = 1000;
/** Values crossing the boundary: deepest nesting and largest size. */
export const MAX_VALUE_DEPTH = 200;
export const MAX_VALUE_BYTES = 64 * 1_048_576;
const MAX_TIMERS = 1000;
const CALL_LIMITS = { maxConcurrent: 64, maxPending: 10_000, maxPendingBytes: 256 * 1_048_576 };
/** Promise jobs run per slice; between slices the host checks for the end of the run. */
const JOBS_PER_SLICE = 512;
/** A busy guest yields to the host's event loop this often, so tool calls and I/O progress. */
const YIELD_EVERY_MS = 8;
/** Jobs run after a stop to let QuickJS's interrupt end an async loop (see conclude). */
const STOP_DRAIN_JOBS = 100_000;

type Outcome = { kind: ReportKind; decoded: Decoded };

/** State of the run in progress. */
interface ActiveRun {
  seq: number;
  instance: SandboxInstance;
  deadline: number;
  output: RunOutput;
  outcome: Outcome | null;
  timers: Map<number, ReturnType<typeof setTimeout>>;
  fired: Set<number>;
  /** Replies of namespace calls, delivered with the next step. */
  replies: EncodedReply[];
  wake: (() => void) | null;
  /** RunOptions.signal aborted: the run stops as at its deadline. */
  cancelled: boolean;
}

export class SandboxExecutor implements Executor {
  readonly kind = "sandbox";
  /** Exists to contain code nobody vouches for, so workflows it saves are untrusted (src/workflows/provenance.ts). */
  readonly trust = "untrusted" as const;
  readonly runsPreludes = true;
  /** The guest's language (HostServices reads it: tools.describe's form, which workflows run). */
  readonly language: "typescript" | "python";
  private readonly options: z.infer<z.ZodObject<typeof optionsShape>> & { defaultTimeoutMs: number; memoryMb: number; maxOutputBytes: number };
  private readonly registry: ToolRegistry | undefined;
  private readonly codeTools: CodeToolSet | undefined;
  private readonly limits: InstanceLimits;
  private hostServices: HostServices | null = null;
  private readonly router: CallRouter<SandboxInstance>;
  private instance: SandboxInstance | null = null;
  private starting: Promise<SandboxInstance> | null = null;
  private budget = RunBudget.idle(this.kind);
  private active: ActiveRun | null = null;
  private runSeq = 0;
  private readonly queue = new SerialQueue();
  private readonly console: GuestConsole;
  private closed = false;
  /** The deno engine's settings when this executor uses it; the engine is made on first use (denoEngine()). */
  private readonly denoConfig: DenoEngineConfig | null = null;
  private deno: DenoEngine | null = null;
  private denoLoading: Promise<DenoEngine> | null = null;
  /** Replies of calls left running by an earlier run, for the next run (see park). */
  private parked: { instance: SandboxInstance | null; replies: EncodedReply[] } = { instance: null, replies: [] };

  constructor(options: SandboxExecutorOptions = {}) {
    const { tools, ...rest } = options;
    const parsed = parseOptions(optionsShape, rest, "SandboxExecutor");
    this.options = {
      ...parsed,
      defaultTimeoutMs: parsed.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS,
      memoryMb: parsed.memoryMb ?? DEFAULT_MEMORY_MB,
      maxOutputBytes: parsed.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    };
    ({ registry: this.registry, codeTools: this.codeTools } = toolsOption(tools, "SandboxExecutor({ tools })"));
    this.language = parsed.language ?? "typescript";
    if (this.language === "python" && parsed.engine === "quickjs") {
      throw new ValidationError('Invalid SandboxExecutor options: language "python" runs Pyodide in the deno engine; use engine "deno" (or leave engine out).');
    }
    this.limits = { memoryMb: this.options.memoryMb, maxDepth: MAX_VALUE_DEPTH, maxBytes: MAX_VALUE_BYTES, maxTimers: MAX_TIMERS };
    this.router = new CallRouter<SandboxInstance>(CALL_LIMITS, (origin, ok, value) => this.settle(origin, ok, value));
    this.console = createSandboxConsole(() => this.active?.output ?? null);
    if (parsed.engine === "deno" || this.language === "python") {
      this.denoConfig = {
        ...(this.language === "python" ? { python: true } : {}),
        defaultTimeoutMs: this.options.defaultTimeoutMs,
        memoryMb: this.options.memoryMb,
        maxOutputBytes: this.options.maxOutputBytes,
        limits: { maxDepth: MAX_VALUE_DEPTH, maxBytes: MAX_VALUE_BYTES, maxTimers: MAX_TIMERS },
        callLimits: CALL_LIMITS,
        host: this.hostOptions(),
      };
      this.prestart = async () => (await this.denoEngine()).prestart();
    }
  }

  /**
   * The deno engine only (ExecutorPool keeps started spares of it; QuickJS starts in milliseconds
   * and is handed out new): start the guest process — for Python, load Pyodide — before a session.
   */
  readonly prestart?: () => Promise<void>;

  /** A prestarted deno process is ready and no session is bound (see ExecutorPool). */
  get warm(): boolean {
    return this.deno?.warm ?? false;
  }

  get guestExited(): Promise<unknown> | undefined {
    return this.deno?.guestExited;
  }

  /** The engine in use. */
  get engine(): "quickjs" | "deno" {
    return this.denoConfig ? "deno" : "quickjs";
  }

  /** Process id of the deno engine's current process (diagnostics); null for QuickJS or when none runs. */
  get processId(): number | null {
    return this.deno?.pid ?? null;
  }

  get host(): HostServices | null {
    return this.deno ? this.deno.host : this.hostServices;
  }

  capabilities(): CapabilityReport {
    if (this.denoConfig) return this.denoCapabilities();
    return {
      capabilities: ["timeout", "reset", "networkIsolation", "filesystemIsolation", "memoryLimit"],
      notes: [
        "No ambient authority: the code runs in QuickJS (WebAssembly) with JavaScript's builtins, console, timers and the tools/workflows/artifacts/deps namespaces only — no modules, files, network, environment or processes.",
        "timeout: runaway code (synchronous or asynchronous) is stopped at the deadline and variables are kept; a long native operation is stopped by restarting the sandbox, which loses variables. Tool calls count toward the run's timeout and are aborted with it.",
        `memoryLimit: the sandbox's whole memory is capped at ${this.options.memoryMb} MB; running out is a MemoryLimitError and the next run gets a fresh sandbox.`,
        "processIsolation: no — the sandbox runs inside the host process (WebAssembly isolates its memory; a fault restarts only this sandbox). It runs on the host's thread: a CPU-bound run holds the host's event loop until it ends or times out.",
        "depsInstall: no — the sandbox cannot import packages; deps.list() is empty and deps.add() fails. Use tools or workflows, or SubprocessExecutor for packages.",
        "Timers (setTimeout, setInterval) run only while a run is in progress; those left pending when a run ends are dropped. Nothing of the guest executes between runs.",
        "CPU-bound code is much slower than in V8 (an interpreter in WebAssembly); use it for orchestration, not number crunching.",
      ],
    };
  }

  private denoCapabilities(): CapabilityReport {
    if (this.language === "python") return this.pythonCapabilities();
    return {
      capabilities: ["timeout", "reset", "processIsolation", "networkIsolation", "filesystemIsolation", "memoryLimit"],
      notes: [
        "No ambient authority: the code runs in V8 inside a separate deno process started without any --allow-* permission — every file, network, environment, subprocess and FFI access is denied. It has JavaScript's builtins, console, timers and the tools/workflows/artifacts/deps namespaces.",
        "Remote, npm: and jsr: imports are refused by the runtime (--deny-import --no-remote --no-npm --cached-only), also from eval, new Function, data: modules and workers; the deno dir is unusable, so localStorage, the Cache API and caches write nothing.",
        "Guest code never outlives its run: between runs the deno process is frozen (SIGSTOP; on Linux with util-linux's setpriv, which gives it a parent-death signal); code kept busy after its result gets the process restarted; namespace calls outside a run are refused; frames from the guest carry a per-process key, so agent code writing to stdout cannot forge them.",
        "timeout: code waiting (on a tool call, a timer, a promise) is stopped at the deadline and variables are kept; code still running (a loop) is stopped by killing and restarting the deno process, which loses variables. Tool calls count toward the run's timeout and are aborted with it.",
        `memoryLimit: V8's heap is capped at ${this.options.memoryMb} MB (--max-old-space-size); running out ends the process, is reported as a MemoryLimitError, and the next run gets a fresh process.`,
        "processIsolation: yes — a crash of the deno process is an error result and the next run gets a fresh process.",
        "depsInstall: no — the sandbox cannot import packages; deps.list() is empty and deps.add() fails. Use tools or workflows, or SubprocessExecutor for packages.",
        "Timers (setTimeout, setInterval) run only while a run is in progress; those left pending when a run ends are dropped.",
      ],
    };
  }

  private pythonCapabilities(): CapabilityReport {
    return {
      capabilities: ["timeout", "reset", "processIsolation", "networkIsolation", "filesystemIsolation", "memoryLimit"],
      notes: [
        "Python runs in Pyodide (CPython 3 compiled to WebAssembly) inside a deno process whose only permission is reading Pyodide's own files: `import js`, pyodide.code.run_js and pyodide.ffi reach a Deno where every file, network, environment, subprocess and FFI access is denied.",
        "Namespaces as in PythonExecutor: calls are synchronous (tools.x.y(a=1), workflows.name(n=4), artifacts.save(...)), and `await ….call_async(...)` runs them concurrently (asyncio.gather); a call awaited directly (`await tools.x.y(a=1)`) means its call_async. Globals persist, the last expression is the value (its repr is the display), print() goes to stdout, exceptions keep their class name, top-level await works.",
        "workflows: Python workflows (language \"python\") run in this interpreter with kwargs; TypeScript workflows are refused here.",
        "Cold start: begun by start(), and a run waits for it. The first start on a machine makes a memory snapshot of the loaded interpreter (a full Pyodide load, about 3.5–10 s); later starts restore it (about 0.5–0.9 s). A warm sandbox (ExecutorPool) avoids even that per session.",
        "timeout: a run stopped at its deadline (or cancelled) restarts the deno process, so variables are lost and the next run waits for the interpreter to be restored again.",
        `memoryLimit: the process's resident memory is capped at ${this.options.memoryMb} MB plus Pyodide's own (~350 MB in all for the runtime); past it the process is killed (MemoryLimitError) and variables are lost.`,
        "Between runs the deno process is frozen (SIGSTOP); asyncio tasks a run left are cancelled when it ends, and timers only fire during a run.",
        "depsInstall: no — only Pyodide's standard library is there; packages such as numpy or micropip cannot load (they would be fetched from the network, which is denied).",
      ],
    };
  }

  private hostOptions(): Omit<HostServicesOptions, "storage"> {
    return {
      origin: this,
      ...(this.registry ? { tools: this.registry } : { toolsPath: this.options.toolsPath }),
      ...(this.codeTools ? { codeTools: this.codeTools } : {}),
      // Counted by the host before any middleware: the calls the agent made, not retries inside.
      maxToolCallsPerRun: this.options.maxToolCallsPerRun ?? DEFAULT_MAX_TOOL_CALLS_PER_RUN,
      ...(this.options.middleware ? { middleware: this.options.middleware } : {}),
      ...(this.options.search ? { search: this.options.search } : {}),
      ...hostLimitsOf(this.options),
      depsUnavailable:
        "the sandbox executor cannot import packages (no module loader, no ambient authority), so deps.{op}() is not available; " +
        "use tools or workflows instead, or an executor with the depsInstall capability (SubprocessExecutor)",
    };
  }

  async start(storage: StorageBackend): Promise<void> {
    if (this.denoConfig) return (await this.denoEngine()).start(storage);
    if (this.closed) throw new ValidationError("SandboxExecutor is closed; create a new one");
    if (this.hostServices) return;
    const host = await HostServices.create({ storage, ...this.hostOptions() });
    this.hostServices = host;
    this.router.attach(new RpcProvider(host, (m) => this.router.deliver(m), () => this.budget.callContext()));
    try {
      await this.ensureInstance();
    } catch (err) {
      this.hostServices = null;
      await host.close();
      throw err;
    }
  }

  run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    if (this.denoConfig) return this.denoEngine().then((deno) => deno.run(code, options));
    return this.queue.run(() => this.runNow(code, options));
  }

  async reset(): Promise<void> {
    if (this.denoConfig) return (await this.denoEngine()).reset();
    await this.queue.run(async () => {
      if (this.closed || !this.hostServices) return;
      this.console.clear();
      this.replaceInstance();
      await this.ensureInstance().catch(() => undefined);
    });
  }

  async close(): Promise<void> {
    if (this.denoConfig) return (await this.denoEngine()).close();
    if (this.closed) return;
    this.closed = true;
    this.budget.abort("the executor was closed");
    this.active?.wake?.();
    await this.starting?.catch(() => undefined);
    this.router.drop(() => true);
    this.console.clear();
    this.dropInstance();
    const host = this.hostServices;
    this.hostServices = null;
    await host?.close();
  }

  // ---- runs -----------------------------------------------------------------------------------

  private async runNow(code: string, options: RunOptions): Promise<ExecutionResult> {
    const startedAt = performance.now();
    const admitted = admitRun(code, { closed: this.closed, started: this.hostServices !== null }, startedAt, undefined, options.prelude);
    if (admitted.result) return admitted.result;
    const { script } = admitted;
    let instance: SandboxInstance;
    try {
      instance = await this.ensureInstance();
    } catch (err) {
      return errorResult({ name: "ExecutorStartError", message: `The sandbox could not start: ${err instanceof Error ? err.message : String(err)}` }, startedAt);
    }
    const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs;
    this.budget = new RunBudget(timeoutMs, this.kind, options.runId);
    const streamer = streamerFor(options.onOutput);
    const run: ActiveRun = {
      seq: ++this.runSeq,
      instance,
      deadline: performance.now() + timeoutMs,
      output: newRunOutput(this.options.maxOutputBytes, streamer),
      outcome: null,
      timers: new Map(),
      fired: new Set(),
      // Replies that arrived between runs are delivered with this run's first step.
      replies: this.parked.instance === instance ? this.parked.replies.splice(0) : [],
      wake: null,
      cancelled: false,
    };
    this.active = run;
    // Seen between slices of the run (QuickJS runs on this thread: a synchronous loop inside one
    // evaluation is stopped by its deadline only).
    const stopListening = onAbort(options.signal, () => {
      run.cancelled = true;
      run.wake?.();
    });
    let fields: Pick<ExecutionResult, "ok" | "value" | "display" | "error">;
    try {
      fields = run.cancelled ? { ok: false, value: undefined, display: "", error: cancelledError("It had not started.") } : await this.drive(run, script, timeoutMs);
    } finally {
      stopListening();
      streamer?.close();
      for (const t of run.timers.values()) clearTimeout(t);
      run.timers.clear();
      this.active = null;
      this.hostServices?.toolSessions.endRun(this.budget.id);
      this.budget = RunBudget.idle(this.kind);
      // Replies that arrived as the run ended belong to calls left running: kept for the next run.
      if (run.replies.length) this.park(run.instance, run.replies.splice(0));
    }
    return {
      ...fields,
      stdout: run.output.stdout.text(),
      stderr: run.output.stderr.text(),
      durationMs: performance.now() - startedAt,
    };
  }

  /** Evaluate, then run promise jobs and timers until the snippet settles or the deadline passes. */
  private async drive(run: ActiveRun, script: string, timeoutMs: number): Promise<Pick<ExecutionResult, "ok" | "value" | "display" | "error">> {
    const { instance } = run;
    instance.setDeadline(run.deadline);
    const deadline = { timer: undefined as ReturnType<typeof setTimeout> | undefined };
    try {
      await this.driveLoop(run, script, deadline);
    } finally {
      clearTimeout(deadline.timer);
    }
    return this.conclude(run, timeoutMs);
  }

  private async driveLoop(run: ActiveRun, script: string, deadline: { timer: ReturnType<typeof setTimeout> | undefined }): Promise<void> {
    const { instance } = run;
    // One timer for the whole run, armed at its first wait, wakes a wait at the deadline (a timer
    // per wait cost one per tool call). A timer can fire a little before performance.now() reaches
    // the deadline: it re-arms.
    const armDeadline = (): void => {
      const left = run.deadline - performance.now();
      deadline.timer = setTimeout(() => (performance.now() < run.deadline ? armDeadline() : run.wake?.()), Math.max(1, Math.ceil(left)));
    };
    // Replies parked between runs go in with the evaluation's own entry (when it evaluated).
    if (instance.evaluate(script, run.replies, JOBS_PER_SLICE)) run.replies.length = 0;
    let lastYield = performance.now();
    for (;;) {
      if (run.outcome || !instance.usable || instance.interrupted || this.closed || run.cancelled) break;
      const now = performance.now();
      if (now >= run.deadline) break;
      const timer = run.fired.values().next();
      if (run.replies.length || !timer.done || instance.hasPendingJobs()) {
        if (instance.step(run.replies.splice(0), timer.done ? undefined : timer.value, JOBS_PER_SLICE) && !timer.done) run.fired.delete(timer.value);
        if (performance.now() - lastYield >= YIELD_EVERY_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          lastYield = performance.now();
        }
        continue;
      }
      if (deadline.timer === undefined) armDeadline();
      await this.waitForEvent(run);
      lastYield = performance.now();
    }
  }

  private conclude(run: ActiveRun, timeoutMs: number): Pick<ExecutionResult, "ok" | "value" | "display" | "error"> {
    const { instance } = run;
    const fail = (error: ExecutionError) => ({ ok: false, value: undefined, display: "", error });
    const memoryMb = this.options.memoryMb;

    if (this.closed) return fail({ name: "SessionClosedError", message: "The executor was closed while the code was running." });

    if (instance.poisoned) {
      this.stopRun(run, "the sandbox was restarted");
      const error = poisonError(instance.poisoned, timeoutMs, memoryMb, instance.memoryExhausted);
      this.replaceInstance(error.name);
      return fail(error);
    }

    const outcome = run.outcome;
    if (outcome && outcome.kind !== "uncaught" && !(instance.interrupted && outcome.kind === "error")) {
      // Timers do not outlive their run; calls left running may still settle later.
      instance.setIdleDeadline();
      if (run.timers.size || run.fired.size) instance.forget(false);
      if (outcome.kind === "value") return { ok: true, ...valueFields(outcome.decoded), error: null };
      if (outcome.kind === "unencodable") return { ok: true, ...unencodableFields(String(outcome.decoded.value)), error: null };
      const error = thrownError(outcome.decoded.value, memoryMb);
      if (error.name === "MemoryLimitError" || instance.memoryExhausted) {
        this.stopRun(run, "the sandbox ran out of memory");
        this.replaceInstance("MemoryLimitError");
        return fail(error.name === "MemoryLimitError" ? error : memoryError(memoryMb, false));
      }
      return fail(error);
    }

    // The run is stopped: the deadline passed (QuickJS's interrupt handler stopped running code, or
    // the run was waiting on a tool call, a timer, a promise that never settles), or a timer
    // callback threw, which ends the run as an uncaught exception would end a process.
    const uncaught = outcome?.kind === "uncaught" ? outcome : null;
    this.stopRun(run, uncaught ? "an exception in a timer callback ended the run" : run.cancelled ? "the run was cancelled" : `the run timed out after ${timeoutMs} ms`);
    if (instance.memoryExhausted) {
      this.replaceInstance("MemoryLimitError");
      return fail(memoryError(memoryMb, true));
    }
    let wasRunning = instance.interrupted;
    instance.releaseMain();
    if (instance.hasPendingJobs()) {
      // Code still queued at the deadline (an async loop between two interrupt checks): run its
      // jobs under the expired deadline, so QuickJS's next interrupt check stops it for good.
      instance.setDeadline(performance.now() - 1);
      instance.runJobs(STOP_DRAIN_JOBS);
      wasRunning ||= instance.interrupted;
    }
    instance.setIdleDeadline();
    instance.forget(true);
    // Whatever the stopped code still has queued (a promise chain that re-queues itself) must not
    // run in the next run; when nothing is queued, the context is consistent and variables are kept.
    const lost = !instance.usable || instance.hasPendingJobs();
    if (lost) this.replaceInstance(uncaught ? "UncaughtException" : run.cancelled ? CANCELLED_ERROR_NAME : "TimeoutError");
    if (uncaught) {
      const error = uncaughtError(uncaught.decoded.value, memoryMb);
      return fail(lost ? { ...error, message: `${error.message}. The sandbox was restarted, so variables from earlier runs were lost.` } : error);
    }
    if (run.cancelled && !run.outcome) {
      return fail(cancelledError(lost ? "The code was stopped by restarting the sandbox, so variables from earlier runs were lost." : "The code was stopped; its pending calls were aborted; variables are kept."));
    }
    return fail(timeoutError(timeoutMs, lost ? "lost" : wasRunning ? "kept" : "waiting"));
  }

  /** End what a stopped run left: its calls are aborted and their replies ignored. */
  private stopRun(run: ActiveRun, reason: string): void {
    run.replies.length = 0;
    this.budget.abort(reason);
    this.router.drop((origin) => origin.run === run.seq || origin.target === run.instance);
  }

  /** Until something wakes the run: a reply, a timer, its outcome, a cancel, or its deadline (see drive). */
  private waitForEvent(run: ActiveRun): Promise<void> {
    return new Promise<void>((resolve) => {
      run.wake = () => {
        run.wake = null;
        resolve();
      };
    });
  }

  // ---- what the guest asks of the host (called from inside an entry) ---------------------------

  private readonly hooks: InstanceHooks = {
    call: (instance, guestId, ns, op, args, bytes) => {
      const origin: CallOrigin<SandboxInstance> = { target: instance, guestId, run: this.active?.instance === instance ? this.active.seq : 0 };
      if (origin.run === 0) {
        // Guest code outside a run (it should never execute then): it does not reach the host's services.
        this.router.reject(origin, toWireError(new ValidationError(`${ns}.${op}: namespace calls are only possible while a run is in progress`), `${ns}.${op}`));
        return;
      }
      if (args instanceof Error) {
        this.router.reject(origin, toWireError(new ValidationError(args.message), `${ns}.${op}`));
        return;
      }
      this.router.submit(origin, ns, op, args, bytes);
    },
    console: (method, args) => {
      // Hooks run only once an instance exists, so QuickJS is loaded here.
      if (!(quickjs?.CONSOLE_METHODS as readonly string[] | undefined)?.includes(method)) throw new TypeError("sandbox: unknown console method");
      this.console.methods[method]?.(...args);
    },
    timer: (id, ms, repeat) => {
      const run = this.active;
      if (!run) return;
      const existing = run.timers.get(id);
      if (ms < 0) {
        if (existing) clearTimeout(existing);
        run.timers.delete(id);
        run.fired.delete(id);
        return;
      }
      if (existing || run.timers.size >= MAX_TIMERS) throw new RangeError(`more than ${MAX_TIMERS} timers pending in the sandbox`);
      const fire = () => {
        if (!repeat) run.timers.delete(id);
        run.fired.add(id);
        run.wake?.();
      };
      const delay = Math.min(Math.max(0, Number.isFinite(ms) ? ms : 0), 2_147_483_647);
      run.timers.set(id, repeat ? setInterval(fire, Math.max(1, delay)) : setTimeout(fire, delay));
    },
    report: (kind, decoded) => {
      const run = this.active;
      if (!run || run.outcome) return;
      // A timer's uncaught exception ends the run, as an uncaught exception would end a process.
      run.outcome = { kind, decoded };
      run.wake?.();
    },
  };

  /** A reply (or an immediate refusal) for a call: into the sandbox that made it, if it is still the current one. */
  private settle(origin: CallOrigin<SandboxInstance>, ok: boolean, value: unknown): void {
    const instance = origin.target;
    if (instance !== this.instance || !instance.usable) return;
    const reply = instance.encodeReply(origin.guestId, ok, value);
    const run = this.active;
    if (run?.instance === instance) {
      run.replies.push(reply);
      run.wake?.();
      return;
    }
    this.park(instance, [reply]);
  }

  /**
   * Keep replies that arrive between runs until the next run. Delivering one runs guest code (a
   * promise's resolution reads `then`, which agent code can make a getter), and nothing of the
   * guest executes between runs. Their number and size are bounded by the call router's limits.
   */
  private park(instance: SandboxInstance, replies: EncodedReply[]): void {
    if (instance !== this.instance || !instance.usable) return;
    if (this.parked.instance !== instance) this.parked = { instance, replies: [] };
    this.parked.replies.push(...replies);
  }

  /** The deno engine, made (its module imported) on first use; only when `denoConfig` is set. */
  private denoEngine(): Promise<DenoEngine> {
    const config = this.denoConfig;
    if (!config) return Promise.reject(new Error("SandboxExecutor: the deno engine is not in use"));
    return (this.denoLoading ??= import("./deno/engine.js").then(({ DenoEngine }) => (this.deno = new DenoEngine(config))));
  }

  // ---- the sandbox instance ---------------------------------------------------------------------

  private async ensureInstance(): Promise<SandboxInstance> {
    if (this.instance?.usable) return this.instance;
    if (this.instance) this.replaceInstance("SandboxCrashError");
    this.starting ??= loadQuickJs()
      .then(({ SandboxInstance }) => SandboxInstance.create(this.limits, this.hooks))
      .finally(() => {
        this.starting = null;
      });
    const instance = await this.starting;
    if (this.closed) {
      instance.dispose();
      throw new ValidationError("the executor was closed");
    }
    this.instance = instance;
    return instance;
  }

  /**
   * Drop the current sandbox; the next run (or reset) makes a fresh one. `reason` (an error name)
   * counts it as a restart in the executor-restarts metric; a reset the caller asked for is none.
   */
  private replaceInstance(reason?: string): void {
    if (reason) recordExecutorRestart(this.kind, reason);
    this.dropInstance();
    if (!this.closed && this.hostServices) void this.ensureInstance().catch(() => undefined);
  }

  private dropInstance(): void {
    const old = this.instance;
    this.instance = null;
    this.parked = { instance: null, replies: [] };
    if (!old) return;
    this.router.drop((origin) => origin.target === old);
    old.dispose();
  }
}
