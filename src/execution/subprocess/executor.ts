/**
 * SubprocessExecutor, the default: the agent's code runs in a child `node` process. The host keeps
 * all authority over data (every namespace call is answered by the RpcProvider) and all control:
 *
 *   - timeout: synchronous code before the first await is interrupted inside the child (variables
 *     kept); anything else still running at the deadline is stopped by killing the child, and the
 *     error says the variables were lost. A fresh child is started at once for the next run.
 *   - maxMemoryMb caps the child's V8 heap and (on Linux) its whole resident memory, polled from
 *     /proc (see memory-watch.ts); exceeding it is reported as MemoryLimitError.
 *   - killing the child kills what it started, found through /proc on Linux (process-tree.ts).
 *   - every message from the child is validated and size-checked (messages.ts); a call that
 *     arrives when no run is in progress is refused.
 *   - a crash (process.exit, an exception thrown from a timer, a signal) becomes an error result.
 *   - reset() replaces the child; close() kills it and waits for it to exit.
 *
 * Tool calls follow RunBudget's rule: they get the time left in the run and are aborted with it.
 */
import { admitRun, type Admission } from "../admit.js";
import { loadParser } from "../prepare.js";
import path from "node:path";
import { z } from "zod";
import { lazy } from "../../lazy.js";
import { ValidationError } from "../../errors.js";
import type { StorageBackend } from "../../storage/protocol.js";
import type { ToolMiddleware } from "../../tools/middleware/types.js";
import type { ToolRegistry } from "../../tools/registry.js";
import { toolsOption, type CodeToolSet, type CodeToolsInput } from "../../tools/code/tool-set.js";
import { HostServices, type HostServicesOptions } from "../host.js";
import { depsServiceFor, validateDepsConfig, type DepsConfig, type DepsService } from "../../deps/index.js";
import { installConfiguredDeps } from "../deps-startup.js";
import { baseOptionsShape, DEFAULT_TIMEOUT_MS, depsConfigOf, depsOptionsShape, FAST_EXECUTOR_CHECKS, hostLimitsOf, parseOptions } from "../options.js";
import type { SearchOptions } from "../../search/config.js";
import type { Capability, CapabilityReport, ExecutionError, ExecutionResult, Executor, RunOptions } from "../protocol.js";
import { errorResult } from "../result.js";
import { RpcProvider } from "../rpc/provider.js";
import type { CallMessage, GuestToHost, OutputMessage, ResultMessage } from "../rpc/protocol.js";
import { cancelledError as sharedCancelledError, type OutputListener } from "../output-stream.js";
import { MESSAGE_LIMITS } from "./message-limits.js";
import { RunBudget } from "../run-budget.js";
import { SerialQueue } from "../../serial-queue.js";
import { deathSignalLauncher } from "../freeze.js";
import { canWatchMemory, MEMORY_POLL_MS } from "./memory-watch.js";
import { ChildHandle, describeExit, stringEnv, isOutOfMemory, type ChildExit, type ChildPermissions, type GuestHandle, type GuestLauncher, type GuestProgram, type SpawnOptions } from "./child-process.js";
import { SIGINT_INTERRUPTS } from "./interrupt.js";
import { launchWithSpare } from "./spare-children.js";
import { SharedChildren } from "./shared-children.js";
import { recordExecutorRestart } from "../../telemetry/metrics.js";

export interface SubprocessExecutorOptions extends DepsConfig {
  toolsPath?: string;
  /** Timeout of a run that gives none; default 30 s. */
  defaultTimeoutMs?: number;
  /**
   * Cap on the child's memory in MB: its V8 heap (--max-old-space-size) and, on Linux, its whole
   * resident memory (Buffers included), polled by the host. Default: Node's own heap limit only.
   */
  maxMemoryMb?: number;
  /** How long a child may take to start before start() fails; default 10 s. */
  startupTimeoutMs?: number;
  /**
   * After a run's deadline or a cancel, how long a guest that is only waiting (on a tool, a timer,
   * a promise) has to end the run itself, keeping its variables, before the host interrupts it as
   * busy; default IDLE_STOP_GRACE_MS (1 s). Raise it on a heavily loaded machine; lower it to
   * stop busy code sooner.
   */
  stopGraceMs?: number;
  /**
   * Run the child under Node's permission model. Node 20 does not restrict the network there:
   * use SandboxExecutor or ContainerExecutor when network access must be denied.
   */
  permissions?: ChildPermissions;
  /** The child's environment. Default: the host's environment. */
  env?: Record<string, string>;
  /** The child's working directory (and where it imports packages from). Default: the host's cwd. */
  cwd?: string;
  /**
   * Tools defined in code — `[defineTool(...)]`, `{ weather: tool(...) }`, `{ github: { createIssue } }`,
   * an MCP client or server parameters (see tools/code/tool-set.ts) — beside the YAML tools of
   * `toolsPath`; they run on the host. Or a ready ToolRegistry, which wins over `toolsPath`.
   */
  tools?: ToolRegistry | CodeToolsInput;
  /** Tool middleware applied on the host to every tool call (see tools/middleware). */
  middleware?: ToolMiddleware[];
  /** How tools.search / workflows.search rank (see ExecutorOptions.search). */
  search?: SearchOptions;
  /** Bytes the session's namespace calls may hold in the host at once (see ExecutorOptions.maxInFlightBytes; default 256 MiB). */
  maxInFlightBytes?: number;
  /** Read-only folders of Agent Skills (see ExecutorOptions.skillRoots). */
  skillRoots?: string[];
  /**
   * Keep one started child of this executor's configuration ready in the background, so the next
   * session of the same configuration starts in milliseconds (see spare-children.ts; bounded,
   * killed after 30 s unused, never keeps the process alive). Default true; false starts no spare.
   */
  spareChild?: boolean;
  /**
   * Run this session in its own context inside a child shared with other sessions (see
   * shared-children.ts): far less memory per session, but the sessions of one child share its
   * heap, memory cap and process, and code that only ending the process stops ends them all (see
   * capabilities()). The child's options (maxMemoryMb, env, cwd) are the SharedChildren's;
   * permissions and spareChild do not apply.
   */
  sharedChild?: SharedChildren;
}

const optionsShape = lazy(() => ({
  ...baseOptionsShape,
  ...depsOptionsShape,
  maxMemoryMb: z.number({ error: "must be a number of megabytes" }).int("must be a whole number").min(16, "must be at least 16 MB").max(1_048_576, "is too large").optional(),
  startupTimeoutMs: z.number({ error: "must be a number of milliseconds" }).int().min(100, "must be at least 100 ms").max(600_000).optional(),
  stopGraceMs: z.number({ error: "must be a number of milliseconds" }).int("must be a whole number of milliseconds").min(0, "must be at least 0 ms").max(600_000, "must be at most 600000 ms").optional(),
  permissions: z
    .strictObject({
      fsRead: z.array(z.string().min(1)).optional(),
      fsWrite: z.array(z.string().min(1)).optional(),
      childProcess: z.boolean().optional(),
    })
    .optional(),
  env: z.record(z.string(), z.string({ error: "environment values must be strings" })).optional(),
  cwd: z.string().min(1).optional(),
  spareChild: z.boolean().optional(),
}));

// capabilities() notes that hold alike for a child of its own and a shared one.
const TOOL_CALLS_NOTE = "Tool calls count toward the run's timeout: each gets min(its own timeout, time left in the run) and is aborted when the run is stopped.";
const NETWORK_NOTE = "No network isolation: the child may open connections. Node 20's permission model does not restrict the network either; use SandboxExecutor for that.";
const CHILD_PROCESSES_NOTE =
  "Child processes: reset(), close() and every restart kill the child and, on Linux, every process it started that /proc shows as its descendant, in its group or session, or carrying its marker environment variable (plain, detached, nohup and setsid+double-fork ones included); on other platforms the child leads its own process group and the group is killed. A process that clears its environment and double-forks away escapes; use a container for that.";
const RUNS_END_NOTE = "Runs end: timers and immediates the code left are cleared when its run ends, and a namespace call made after its run ended is refused by the host.";

/** How long after the run's deadline the host waits for the child's own TimeoutError before killing it. */
const KILL_GRACE_MS = 200;
/**
 * How long the host waits, after a run's deadline or cancel, for an idle guest to end the run
 * itself (StopMessage: it keeps its variables). A guest that is busy (a synchronous loop, a
 * microtask storm) cannot read the message; after this it is interrupted, then replaced.
 */
export const IDLE_STOP_GRACE_MS = 1_000;
/** How often a held deadline (a human deciding on an approval) is looked at again. */
const HOLD_POLL_MS = 250;
const DEFAULT_STARTUP_TIMEOUT_MS = 10_000;

interface PendingRun {
  runId: number;
  resolve(result: ExecutionResult): void;
  /** The guest's result of this run arrived. */
  finished(message: ResultMessage): void;
  /**
   * Set when the result is read: from then on the run takes no call, although `pending` is only
   * cleared once the result has made its way out (a call the child sends right behind its result
   * arrives in the same read, before that).
   */
  resultRead?: true;
  /** The child died during the run. */
  crashed(exit: ChildExit): void;
  /** Output the child streamed for this run (only when the caller listens). */
  output?: (message: OutputMessage) => void;
}

export class SubprocessExecutor implements Executor {
  readonly kind: string = "subprocess";
  /** Runs code with Node's authority, so workflows it saves are trusted (src/workflows/provenance.ts). */
  readonly trust = "trusted" as const;
  readonly runsPreludes: boolean = true;
  /** skills.run may start a script on the host (this executor already runs code with the host's authority). */
  readonly runsCommands = true;
  private readonly options: z.infer<z.ZodObject<typeof optionsShape>> & { defaultTimeoutMs: number };
  private readonly registry: ToolRegistry | undefined;
  private readonly codeTools: CodeToolSet | undefined;
  private hostServices: HostServices | null = null;
  private provider: RpcProvider | null = null;
  private child: GuestHandle | null = null;
  private budget = RunBudget.idle(this.kind);
  private pending: PendingRun | null = null;
  /** The freeze scheduled one host turn after the last result (see freezeSoon). */
  private freezeTimer: NodeJS.Immediate | null = null;
  private nextRunId = 1;
  /** Namespace calls being answered; when a run ends with some still going, they are aborted. */
  private callsInFlight = 0;
  /** What happened to a child that died between runs; told to the agent with the next result. */
  private unreportedExit: string | null = null;
  private readonly queue = new SerialQueue();
  private closed = false;
  /** Where deps.add() installs; the child imports from here first. */
  private depsDir: string | null = null;
  /** Prestarted by an ExecutorPool, which keeps the spares (see spare-children.ts). */
  private pooled = false;
  /** Starts the next implicit spare of this configuration; called once start() succeeded. */
  private replenishSpare: (() => void) | null = null;

  /**
   * `launch` (internal): how a guest is started; ContainerExecutor passes one that starts a
   * container, and reuses all of this executor's policy (timeouts, crashes, restarts, streaming).
   */
  /** The children this session shares (SubprocessExecutorOptions.sharedChild); null: a child of its own. */
  private readonly sharing: SharedChildren | null;

  constructor(
    options: SubprocessExecutorOptions = {},
    private readonly launch: GuestLauncher = launchChild,
    /** Internal: who the host services serve when not this executor (ContainerExecutor: its own kind, trust and skills.run). */
    private readonly origin?: HostServicesOptions["origin"],
  ) {
    const { tools, sharedChild, ...rest } = options;
    this.sharing = sharedChildOption(sharedChild, rest, launch === launchChild, new.target.name);
    if (this.sharing) this.launch = this.sharing.launch;
    const parsed = parseOptions(optionsShape, rest, new.target.name, FAST_EXECUTOR_CHECKS);
    this.options = { ...parsed, defaultTimeoutMs: parsed.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS };
    validateDepsConfig(this.options);
    ({ registry: this.registry, codeTools: this.codeTools } = toolsOption(tools, "SubprocessExecutor({ tools })"));
    // child.js is started to be interrupted with SIGINT (see interrupt.ts); another launcher's guest is not.
    this.interruptsAtDeadline = this.launch === launchChild && SIGINT_INTERRUPTS;
    this.interruptNeedsAck = this.interruptsAtDeadline;
  }

  get host(): HostServices | null {
    return this.hostServices;
  }

  /** pid of the current child, if one is running (tests check that none is left after close). */
  get pid(): number | undefined {
    return this.child?.isAlive ? this.child.pid : undefined;
  }

  capabilities(): CapabilityReport {
    if (this.sharing) return this.sharedCapabilities();
    const notes = [
      "timeout: synchronous code before the first await is interrupted and variables are kept; any other runaway code is stopped by restarting the child process, which loses variables.",
      TOOL_CALLS_NOTE,
      "processIsolation: a crash, process.exit() or an out-of-memory error ends only the child; the next run gets a fresh one.",
      NETWORK_NOTE,
      CHILD_PROCESSES_NOTE,
      RUNS_END_NOTE,
      this.freezes()
        ? "Between runs the child and every process it started (found as for killing) are frozen (SIGSTOP; the child is started through util-linux's setpriv with a parent-death signal, so it dies with the host even while frozen): code reaching Node's own timers, sockets or processes does not execute until the next run. A process that clears its environment and double-forks away is not frozen."
        : "Between runs the child is not frozen here (that needs Linux and util-linux's setpriv): code that reaches Node's own timers, sockets or processes may keep running inside the child until reset() or close(), without reaching the host.",
    ];
    if (this.options.maxMemoryMb === undefined) notes.push("memoryLimit: no maxMemoryMb set, so only Node's default heap limit applies.");
    else if (canWatchMemory)
      notes.push(
        `memoryLimit: maxMemoryMb caps V8's heap (--max-old-space-size) and the whole process: the host reads the child's own resident memory (RssAnon + RssShmem in /proc, so Buffers and native allocations count) every ${MEMORY_POLL_MS} ms and kills it past the cap; between two reads it may briefly go over. Address-space rlimits are not used: V8 reserves gigabytes of address space and does not start under them.`,
      );
    else notes.push("memoryLimit: on this platform maxMemoryMb caps only V8's heap (--max-old-space-size); Buffers and native allocations are not counted (the whole-process cap needs Linux's /proc).");
    if (this.options.permissions) notes.push("filesystem: restricted by Node's permission model to the folders given in permissions.");
    const caps: Capability[] = ["timeout", "processIsolation", "memoryLimit", "reset"];
    if (this.options.allowRuntimeDeps !== false) caps.push("depsInstall");
    return { capabilities: caps, notes };
  }

  /** A session in a child shared with others (sharedChild): what it gives up for its lower memory. */
  private sharedCapabilities(): CapabilityReport {
    const sharing = this.sharing as SharedChildren;
    const notes = [
      `sharedChild: this session runs in its own vm context inside a child process shared with up to ${sharing.sessionsPerChild - 1} other sessions of the same SharedChildren (sessionsPerChild). Each session has its own globals and variables, but they share the child's heap, memory cap, event loop and Node's process-wide objects (process, require's module cache, Buffer, process.send): code of one session can reach another's through those. Share a child only between sessions of one trust domain; the host itself stays out of reach as with a child of its own.`,
      "timeout: synchronous code before the first await is stopped inside the child by vm's own timeout and its variables are kept, and the other sessions go on. Code that only ending the process stops (asynchronous code still busy at its deadline, cancel or close) ends the shared child: this session's run ends with TimeoutError or CancelledError, another session's run in progress with SessionLostError, and an idle session is told with its next result; every one of them goes on in a fresh context of a new child, its variables lost.",
      TOOL_CALLS_NOTE,
      "processIsolation: a crash, process.exit() or an out-of-memory error ends the shared child and every session in it (their next runs get fresh contexts in a new child); the host is not affected.",
      NETWORK_NOTE,
      "Child processes: processes a session's code started belong to the shared child, not the session: they are killed (as for a child of its own: descendants, group, session and marker-carrying ones on Linux) when the child ends (its last session leaves, or a restart), not when one session resets or closes.",
      RUNS_END_NOTE,
      this.freezes()
        ? "Between runs the shared child is frozen (SIGSTOP, as a child of its own) once none of its sessions is running; while another session runs, code this session left reaching Node's own timers or sockets may run too."
        : "Between runs the shared child is not frozen here (that needs Linux and util-linux's setpriv).",
      sharing.maxMemoryMb === undefined
        ? "memoryLimit: no maxMemoryMb set on the SharedChildren, so only Node's default heap limit applies, to the whole shared child."
        : `memoryLimit: the SharedChildren's maxMemoryMb (${sharing.maxMemoryMb} MB) caps each shared child as a whole (V8's heap${canWatchMemory ? " and its resident memory" : ""}): one session going over it ends every session in that child.`,
      "reset() and close() free only this session's context; the child is ended when its last session leaves.",
    ];
    const caps: Capability[] = ["timeout", "processIsolation", "memoryLimit", "reset"];
    if (this.options.allowRuntimeDeps !== false) caps.push("depsInstall");
    return { capabilities: caps, notes };
  }

  /**
   * Freeze the child one host turn after its result: a caller that runs again at once (a loop of
   * runs, a benchmark) never pays a SIGSTOP/SIGCONT pair, and an idle child is frozen within a
   * turn. The child is a separate process, so it could execute for a moment after sending its
   * result either way; the deferral adds no window that was not already there.
   */
  private freezeSoon(child: GuestHandle): void {
    this.cancelFreeze();
    this.freezeTimer = setImmediate(() => {
      this.freezeTimer = null;
      if (this.child === child && this.pending === null) child.freeze();
    });
  }

  private cancelFreeze(): void {
    if (this.freezeTimer) clearImmediate(this.freezeTimer);
    this.freezeTimer = null;
  }

  private freezes(): boolean {
    return deathSignalLauncher() !== null;
  }

  /**
   * Spawn the child before the session's storage is known (ExecutorPool's spares): the child holds
   * no storage, only the folders it imports from, which depend on the storage's deps folder. `likely`
   * is the storage the session will probably use; start() keeps the child only if its storage gives
   * the same folders, else replaces it (still correct, just not warm).
   */
  async prestart(likely?: StorageBackend): Promise<void> {
    if (this.closed || this.hostServices || this.child) return;
    // The pool keeps its own spares; an implicit one beside each would double the idle children.
    this.pooled = true;
    this.depsDir = depsServiceFor(depsConfigOf(this.options), likely).dir;
    await this.spawn();
  }

  /** A prestarted child is alive and ready (ExecutorPool hands out only these). */
  get warm(): boolean {
    return this.hostServices === null && !this.closed && this.child !== null && this.child.isAlive && this.child.isReady;
  }

  /** Settles when the current child exits (ExecutorPool replaces a spare whose child died while idle). */
  get guestExited(): Promise<unknown> | undefined {
    return this.child?.exited;
  }

  async start(storage: StorageBackend): Promise<void> {
    if (this.closed) throw new ValidationError("SubprocessExecutor is closed; create a new one");
    if (this.hostServices) return;
    const deps = this.depsService(storage);
    // The child starts first, as prestart() would start it: its node start-up (~70 ms) overlaps the
    // host's own setup below (deps check, tool YAML, search) instead of following it (issue 24).
    // A failed early start is retried by ensureChild, which reports the error. Plain node children
    // only: a container or another guest program starts as before.
    let early: GuestHandle | null = null;
    if (!this.child && this.launch === launchChild && this.guestProgram() === undefined) {
      this.depsDir = deps.dir;
      this.spawn().catch(() => undefined);
      early = this.child as GuestHandle | null;
    }
    let host: HostServices;
    try {
      await installConfiguredDeps(deps, this.options.onDepsOutput);
      // A prestarted child spawned for another deps folder would import from the wrong place: replace it.
      if (this.child && this.depsDir !== deps.dir) {
        const spare = this.child;
        this.child = null;
        await spare.kill();
      }
      // A prestarted child that died while idle is replaced by ensureChild below; it was never this session's.
      this.unreportedExit = null;
      this.depsDir = deps.dir;
      host = await HostServices.create({
        storage,
        deps,
        origin: this.origin ?? this,
        ...(this.registry ? { tools: this.registry } : { toolsPath: this.options.toolsPath }),
      ...(this.codeTools ? { codeTools: this.codeTools } : {}),
        ...(this.options.middleware ? { middleware: this.options.middleware } : {}),
        ...(this.options.search ? { search: this.options.search } : {}),
        ...hostLimitsOf(this.options),
      });
    } catch (err) {
      // The setup failed (a broken tool file, a failed install): the child started for it goes too.
      if (early && this.child === early) {
        this.child = null;
        await early.kill();
      }
      throw err;
    }
    this.hostServices = host;
    this.provider = new RpcProvider(host, (m) => this.child?.send(m), () => this.budget.callContext());
    try {
      // The host's setup is done and the child may still be starting (on another core): load what
      // the first run's preparation needs now, instead of after the child is ready.
      if (this.child && !this.child.isReady && this.guestProgram() === undefined) loadParser();
      await this.ensureChild();
      // An early child that died before it was this session's is not reported to it.
      if (early && this.child !== early) this.unreportedExit = null;
      this.replenishSpare?.();
      this.replenishSpare = null;
    } catch (err) {
      this.hostServices = null;
      await host.close();
      throw err;
    }
  }

  /** Executor.prepareAhead: prepares the first run's code (cached by its text) while the child starts. */
  prepareAhead(code: string): void {
    if (!this.closed && !this.hostServices) this.admit(code, { closed: false, started: true }, performance.now());
  }

  run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    return this.queue.run(() => this.runNow(code, options));
  }

  async reset(): Promise<void> {
    await this.queue.run(async () => {
      if (this.closed || !this.hostServices) return;
      await this.replaceChild();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancelFreeze();
    this.budget.abort("the executor was closed");
    const child = this.child;
    this.child = null;
    await child?.kill();
    this.pending?.resolve(errorResult({ name: "SessionClosedError", message: "The executor was closed while the code was running." }, performance.now()));
    this.pending = null;
    const host = this.hostServices;
    this.hostServices = null;
    await host?.close();
  }

  private async runNow(code: string, options: RunOptions): Promise<ExecutionResult> {
    const startedAt = performance.now();
    const admitted = this.admit(code, { closed: this.closed, started: this.hostServices !== null }, startedAt, options.prelude);
    if (admitted.result) return admitted.result;
    const { script } = admitted;
    let child: GuestHandle;
    try {
      child = await this.ensureChild();
    } catch (err) {
      return errorResult({ name: "ExecutorStartError", message: err instanceof Error ? err.message : String(err) }, startedAt);
    }
    if (options.signal?.aborted) return errorResult(sharedCancelledError("It had not started; variables are kept."), startedAt);
    const notice = this.takeExitNotice();
    const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs;
    this.budget = new RunBudget(timeoutMs, this.kind, options.runId);
    const runId = this.nextRunId++;
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const result = await new Promise<ExecutionResult>((resolve) => {
        // The child may die during the run (crash, OOM, process.exit): the one exit handler
        // installed at spawn calls `crashed`. (A handler per run on `child.exited` would pile up
        // for the child's whole life, one closure per run.)
        // With a listener, the output streamed so far is kept for a result made here (a stop, a crash).
        const streamed = options.onOutput ? new StreamedOutput(options.onOutput) : null;
        const stoppedResult = (error: ExecutionError) => errorResult(error, startedAt, streamed?.sofar());
        const timedOut = (): ExecutionError => ({
          name: "TimeoutError",
          message: `Execution timed out after ${timeoutMs} ms. The code was stopped by restarting the executor process, so variables from earlier runs were lost.`,
        });
        // Interrupted at the deadline: a guest that dies of it (asynchronous code was running) timed out.
        let interruptSent = false;
        // A result after the interrupt that does not say this run took it: the SIGINT is still on its
        // way and would end the child during the next run (issue 35). The run outlived its deadline,
        // so it is reported as timed out, its output kept, and the child is replaced.
        const finished = ({ result, interrupted }: ResultMessage) =>
          resolve(interruptSent && this.interruptNeedsAck && !interrupted ? errorResult(timedOut(), startedAt, { stdout: result.stdout, stderr: result.stderr }) : result);
        this.pending = { runId, resolve, finished, crashed: (exit) => resolve(stoppedResult(interruptSent ? timedOut() : this.crashError(exit))), ...(streamed ? { output: (m: OutputMessage) => streamed.take(m) } : {}) };
        // The deadline may have been held (a human deciding on an approval): wait for what is left.
        // A guest that is interrupted by the host (interruptsAtDeadline) gets the interrupt at the
        // deadline and killGraceMs to answer; child.js interrupts itself and is killed KILL_GRACE_MS later.
        // Steps at the deadline: ask the guest to stop (an idle one does, keeping its variables);
        // then interrupt it (SIGINT: synchronous code before the first await stops, variables kept);
        // then replace the process.
        const grace = this.interruptsAtDeadline ? 0 : KILL_GRACE_MS;
        let stopAsked = false;
        const askToStop = (reason: "timeout" | "cancel"): boolean => {
          if (stopAsked) return false;
          stopAsked = true;
          try {
            child.send({ type: "stop", runId, reason });
            return true;
          } catch {
            return false;
          }
        };
        const arm = (ms: number, interrupted: boolean) => {
          killTimer = setTimeout(() => {
            if (this.pending?.runId !== runId) return;
            const left = this.budget.remainingMs();
            if (left > 0) return arm(Number.isFinite(left) ? left + grace : HOLD_POLL_MS, interrupted);
            if (askToStop("timeout")) return arm(this.stopGraceMs, interrupted);
            if (!interrupted && this.interruptsAtDeadline && child.interrupt()) {
              interruptSent = true;
              return arm(this.killGraceMs, true);
            }
            resolve(stoppedResult(timedOut()));
          }, ms);
        };
        arm(timeoutMs + grace, false);
        // A cancel asks an idle guest to stop as a timeout does; a busy one is replaced.
        onAbort = () => {
          if (this.pending?.runId !== runId) return;
          if (killTimer) clearTimeout(killTimer);
          if (!askToStop("cancel")) return resolve(stoppedResult(cancelledError()));
          killTimer = setTimeout(() => {
            if (this.pending?.runId === runId) resolve(stoppedResult(cancelledError()));
          }, this.stopGraceMs);
        };
        options.signal?.addEventListener("abort", onAbort, { once: true });
        try {
          this.cancelFreeze();
          child.resume();
          child.send({ type: "run", runId, script, timeoutMs, ...(options.onOutput ? { stream: true } : {}) });
        } catch (err) {
          resolve(errorResult({ name: "ExecutorCrashError", message: `Could not send the code to the executor process: ${err instanceof Error ? err.message : String(err)}` }, startedAt));
        }
      });
      // Tool calls still in flight (from code the run did not await, or a stopped run) end with the run.
      if (this.callsInFlight > 0 || !result.ok) this.budget.abort(result.error?.message ?? "the run ended");
      if (!result.ok && result.error && this.child === child && (!child.isAlive || isHostStop(result.error))) {
        recordExecutorRestart(this.origin?.kind ?? this.kind, result.error.name);
        await this.replaceChild();
      }
      // Nothing of the guest executes until the next run (issue 13): the child is frozen with what it started.
      else if (this.child === child) this.freezeSoon(child);
      // Copied and set, not `{ ...result, durationMs }`: on Node 20 a spread followed by more properties takes V8's slow path (microseconds, every run).
      const final = Object.assign({}, result);
      if (notice) final.stderr = `${notice}\n${result.stderr}`;
      final.durationMs = performance.now() - startedAt;
      return final;
    } finally {
      if (killTimer) clearTimeout(killTimer);
      if (onAbort) options.signal?.removeEventListener("abort", onAbort);
      this.pending = null;
      this.hostServices?.toolSessions.endRun(this.budget.id);
      this.budget = RunBudget.idle(this.kind);
    }
  }

  private onMessage(child: GuestHandle, message: GuestToHost): void {
    if (child !== this.child) return;
    if (message.type === "call") this.onCall(child, message);
    else if (message.type === "result" && this.pending?.runId === message.runId) {
      this.pending.resultRead = true;
      this.pending.finished(message);
    }
    else if (message.type === "output" && this.pending?.runId === message.runId) this.pending.output?.(message);
  }

  /**
   * Guest code never outlives its run: a call that arrives when no run is in progress (code left
   * running in the child through Node's own timers, sockets, ...) is refused without touching
   * tools or storage.
   */
  private onCall(child: GuestHandle, message: CallMessage): void {
    if (!this.pending || this.pending.resultRead || !this.provider) {
      try {
        child.send({ type: "reply", callId: message.callId, ok: false, error: { name: "RunEndedError", message: `${message.ns}.${message.op}: the run that made this call has ended; code left running after a run cannot call the host.` } });
      } catch {
        // the child is gone
      }
      return;
    }
    this.callsInFlight++;
    void this.provider.handle(message, this.callDone);
  }

  /** A call counted in by onCall was answered. */
  private readonly callDone = (): void => void this.callsInFlight--;

  // Hooks for a guest in another language (PythonExecutor): what it runs, how code is admitted, how it is stopped.

  /** The checks before a run and the script sent; TypeScript is prepared on the host. */
  protected admit(code: unknown, state: { closed: boolean; started: boolean }, startedAt: number, prelude?: string): Admission {
    return admitRun(code, state, startedAt, undefined, prelude);
  }

  /** The guest program; undefined: child.js under this Node. */
  protected guestProgram(): GuestProgram | undefined {
    return undefined;
  }

  /** The deps service behind `deps` (PythonExecutor's installs with pip). */
  protected depsService(storage: StorageBackend): DepsService {
    return depsServiceFor(depsConfigOf(this.options), storage);
  }

  /** Extra environment of the guest. */
  protected guestEnv(): Record<string, string> {
    return {};
  }

  private get stopGraceMs(): number {
    return this.options.stopGraceMs ?? IDLE_STOP_GRACE_MS;
  }

  /** Whether the host interrupts the guest at the deadline (child.interrupt()) before killing it. */
  protected readonly interruptsAtDeadline: boolean;
  /**
   * Whether an interrupt the run did not take outlives it: child.js (started with --trace-sigint)
   * dies of a SIGINT that arrives outside a script, so after an interrupt the child is kept only
   * when its result says the run took it (ResultMessage.interrupted). The Python guest ignores a
   * SIGINT between runs.
   */
  protected readonly interruptNeedsAck: boolean;
  /** After an interrupt, how long the guest has to answer with its own TimeoutError before it is killed. */
  protected readonly killGraceMs: number = KILL_GRACE_MS;

  /** The running child, or a new one once it is ready. */
  private async ensureChild(): Promise<GuestHandle> {
    if (this.child?.isAlive) {
      await this.withStartupTimeout(this.child);
      return this.child;
    }
    // A child that died between runs may have left processes (stopped, if it was frozen): end them.
    await this.child?.kill();
    return this.spawn();
  }

  private spawn(): Promise<GuestHandle> {
    const env = this.options.env ?? stringEnv(process.env);
    const cwd = this.sharing ? this.sharing.cwd : this.options.cwd ? path.resolve(this.options.cwd) : process.cwd();
    const importBases = [...(this.depsDir ? [this.depsDir] : []), cwd];
    const permissions = this.options.permissions && { ...this.options.permissions, fsRead: [...(this.options.permissions.fsRead ?? []), ...importBases] };
    const program = this.guestProgram();
    const spawnOptions: SpawnOptions = {
      maxMemoryMb: this.options.maxMemoryMb,
      permissions,
      env: { ...env, TS_CODE_MODE_IMPORT_BASES: JSON.stringify(importBases), ...this.guestEnv() },
      cwd,
      importBases,
      onMessage: (m) => this.onMessage(child, m),
      ...(program ? { program } : {}),
    };
    // Plain node children of an executor no ExecutorPool prestarted use (and keep) a spare of their configuration.
    let child: GuestHandle;
    if (this.usesSpares()) {
      const launched = launchWithSpare(spawnOptions, launchChildHandle);
      child = launched.child;
      // A started session's replacement child (after a timeout) keeps the spare going at once; a
      // session still starting does so once its start succeeded (start() calls it).
      if (this.hostServices) launched.replenish();
      else this.replenishSpare = launched.replenish;
    } else child = this.launch(spawnOptions);
    this.child = child;
    void child.exited.then((exit) => {
      if (this.child !== child || this.closed) return;
      if (this.pending) this.pending.crashed(exit);
      // A child that dies while idle (killed from outside, over its memory cap) is reported with the next result.
      else this.unreportedExit = describeIdleExit(exit);
    });
    return this.withStartupTimeout(child).then(() => child);
  }

  private usesSpares(): boolean {
    return this.options.spareChild !== false && !this.pooled && this.launch === launchChild && this.guestProgram() === undefined;
  }

  private async withStartupTimeout(child: GuestHandle): Promise<void> {
    if (child.isReady) return;
    const limit = this.options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        child.ready,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the executor process did not start within ${limit} ms (startupTimeoutMs)`)), limit);
        }),
      ]);
    } catch (err) {
      await child.kill();
      if (this.child === child) this.child = null;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kill the current child and start a fresh one in the background; the next run waits for it. */
  private async replaceChild(): Promise<void> {
    const old = this.child;
    this.child = null;
    await old?.kill();
    this.unreportedExit = null;
    if (!this.closed) this.spawn().catch(() => undefined);
  }

  private takeExitNotice(): string | null {
    const notice = this.unreportedExit;
    this.unreportedExit = null;
    return notice;
  }

  private crashError(exit: ChildExit): ExecutionError {
    if (exit.lostWith) {
      return { name: "SessionLostError", message: `The executor process this session shared with other sessions ended: ${exit.lostWith}. Variables from earlier runs were lost; the next run starts in a fresh context.` };
    }
    const lost = `The executor process was restarted; variables from earlier runs were lost.${this.sharing ? " The process was shared with other sessions (SharedChildren), which lost theirs too, and the cause may have been another session's code." : ""}`;
    if (exit.protocolViolation !== null) {
      return { name: "ExecutorCrashError", message: `The executor process sent a message outside the protocol (${exit.protocolViolation}; e.g. a forged process.send()), so it was stopped. ${lost}` };
    }
    if (isOutOfMemory(exit)) {
      const cap = this.options.maxMemoryMb ?? this.sharing?.maxMemoryMb;
      const limit = cap !== undefined ? `the memory limit of ${cap} MB (maxMemoryMb${this.sharing ? ", shared by the sessions of one child" : ""})` : "Node's default heap limit";
      const reached = exit.memoryExceededMb !== null ? ` (the process's own resident memory reached ${Math.round(exit.memoryExceededMb)} MB)` : "";
      return { name: "MemoryLimitError", message: `The code ran out of memory: it exceeded ${limit}${reached}. ${lost}` };
    }
    if (exit.fatal) {
      return { name: exit.fatal.name, message: `Uncaught exception (outside the awaited code, e.g. thrown from a timer): ${exit.fatal.message}. ${lost}` };
    }
    return { name: "ExecutorCrashError", message: `The executor process ended while running the code (${describeExit(exit)}; e.g. process.exit() or a signal). ${lost}` };
  }
}

/** Errors after which the child must not be reused: it was stopped from outside or is in an unknown state. */
function isHostStop(error: ExecutionError): boolean {
  return (error.name === "TimeoutError" || error.name === "CancelledError") && /restarting the executor process/.test(error.message);
}

function cancelledError(): ExecutionError {
  return sharedCancelledError("The code was stopped by restarting the executor process, so variables from earlier runs were lost.");
}

/**
 * Hands the child's output chunks to the caller, and keeps them for a result the host makes (a
 * stopped or crashed run). The child may be forged (process.send is in the guest's reach): what one
 * run may stream is capped per stream like its result's output.
 */
class StreamedOutput {
  private readonly parts = { stdout: [] as string[], stderr: [] as string[] };
  private readonly sent = { stdout: 0, stderr: 0 };

  constructor(private readonly listener: OutputListener) {}

  take({ stream, text }: OutputMessage): void {
    const room = MESSAGE_LIMITS.stream - this.sent[stream];
    if (room <= 0) return;
    const kept = text.length <= room ? text : text.slice(0, room);
    this.sent[stream] += kept.length;
    this.parts[stream].push(kept);
    try {
      this.listener({ stream, text: kept });
    } catch {
      // The listener's problem, not the run's.
    }
  }

  sofar(): { stdout: string; stderr: string } {
    return { stdout: this.parts.stdout.join(""), stderr: this.parts.stderr.join("") };
  }
}
function describeIdleExit(exit: ChildExit): string {
  const why = exit.lostWith ??
    (exit.memoryExceededMb !== null
      ? `over its memory limit: ${Math.round(exit.memoryExceededMb)} MB resident`
      : exit.protocolViolation !== null
        ? `it sent a message outside the protocol: ${exit.protocolViolation}`
        : exit.fatal
          ? `uncaught ${exit.fatal.name}: ${exit.fatal.message}`
          : describeExit(exit));
  return `[ts-code-mode] The executor process ended between runs (${why}); a fresh one ran this code, and variables from earlier runs were lost.`;
}

/**
 * The sharedChild option, checked: a SharedChildren, given without the options that belong to the
 * child (they are the SharedChildren's), to an executor that starts child.js.
 */
function sharedChildOption(value: unknown, rest: Record<string, unknown>, startsChildJs: boolean, executor: string): SharedChildren | null {
  if (value === undefined) return null;
  if (!(value instanceof SharedChildren)) throw new ValidationError(`Invalid ${executor} options: sharedChild must be a SharedChildren (new SharedChildren({ sessionsPerChild })).`);
  if (!startsChildJs) throw new ValidationError(`Invalid ${executor} options: sharedChild applies only to SubprocessExecutor's own node children.`);
  const childOptions = ["maxMemoryMb", "env", "cwd", "permissions", "spareChild"].filter((k) => rest[k] !== undefined);
  if (childOptions.length) {
    throw new ValidationError(`Invalid ${executor} options: ${childOptions.join(", ")} cannot be set with sharedChild: the child is shared, so maxMemoryMb, env and cwd are set on the SharedChildren, and permissions and spare children do not apply.`);
  }
  return value;
}

/** The default launcher: child.js (or a GuestProgram) as a child process. */
function launchChild(options: SpawnOptions): GuestHandle {
  return launchChildHandle(options);
}

function launchChildHandle(options: SpawnOptions): ChildHandle {
  return new ChildHandle(options);
}

