/**
 * The sandbox's "deno" engine: the agent's code runs in V8 inside a separate `deno` process that
 * has no permissions (see process.ts), driven by the guest program of driver.ts. Compared with
 * QuickJS it is a real process boundary and runs CPU-bound code at V8 speed; the price is a
 * process start (~40 ms) and a binary from the optional dependency `deno`.
 *
 *   - namespace calls arrive as frames and go to the ONE RpcProvider through a CallRouter, as in
 *     the QuickJS engine (middleware, run budgets, parallel calls, the same limits);
 *   - console output arrives as frames (the guest's console never touches the real stdout, which
 *     is the protocol channel) and is formatted on the host like every other executor's;
 *   - timeout: the guest is asked to drop its timers and pending calls; if it answers within
 *     STOP_GRACE (250 ms of its own CPU time: it was waiting), variables are kept, otherwise (a busy loop) the process is
 *     killed and restarted and variables are lost;
 *   - memory: V8's heap is capped with --max-old-space-size; running out kills the process, which
 *     is reported as a MemoryLimitError and replaced;
 *   - a crash of the process is an error result and the next run gets a fresh process.
 */
import { admitRun } from "../../admit.js";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ValidationError } from "../../../errors.js";
import type { StorageBackend } from "../../../storage/protocol.js";
import { SerialQueue } from "../../../serial-queue.js";
import { HostServices, type HostServicesOptions } from "../../host.js";
import type { RunOutput } from "../../output.js";
import type { ExecutionError, ExecutionResult, RunOptions } from "../../protocol.js";
import { errorResult, MAX_DISPLAY_CHARS } from "../../result.js";
import { RpcProvider } from "../../rpc/provider.js";
import { RunBudget } from "../../run-budget.js";
import { toWireError } from "../../wire-error.js";
import { CallRouter, type CallLimits, type CallOrigin } from "../calls.js";
import { BoundaryError, decode, encode, type Decoded, type DecodeOptions, type EncodeOptions } from "../codec.js";
import { CONSOLE_METHODS, type GuestLimits } from "../guest/runtime.js";
import { Opaque } from "../opaque.js";
import { memoryError, thrownError, timeoutError, uncaughtError, unencodableFields, valueFields } from "../outcome.js";
import { cancelledError, onAbort, streamerFor } from "../../output-stream.js";
import { recordExecutorRestart } from "../../../telemetry/metrics.js";
import type { GuestConsole } from "../../output.js";
import { createSandboxConsole, newRunOutput } from "../output.js";
import { denoGuestProgram } from "./driver.js";
import { whenBusy, type CpuGrace } from "../../cpu-grace.js";
import { DenoProcess, denoBinaryPath, describeExit, type DenoExit, type Frame } from "./process.js";

/**
 * After every run (and a timeout or cancel), how long the guest has to confirm it dropped the run's
 * work before it is judged busy and replaced: 250 ms of its own CPU time, so a guest that merely
 * waits for a CPU on a loaded machine is not mistaken for a runaway loop (cpu-grace.ts), and at
 * most 10 s whatever it used.
 */
const STOP_GRACE: CpuGrace = { graceMs: 250, maxWaitMs: 10_000 };
/**
 * V8's heap cap does not cover ArrayBuffers (typed arrays live outside the heap), so during a run
 * the process's resident memory is checked this often, and a process over memoryMb plus
 * RSS_OVERHEAD_MB (the runtime itself, young generation, code) is ended as out of memory.
 */
const RSS_CHECK_MS = 20;
const RSS_OVERHEAD_MB = 96;
/** The regular file DENO_DIR is placed under (see DenoProcess). */
const DENO_DIR_BLOCKER = "no-deno-dir";
/**
 * How long a fresh process may take to say it is ready: ~100 ms on an idle machine, seconds on a
 * loaded one (in a clean-clone CI run, a cancel and the restart after it took 20 s where the
 * limit was 15 s). The limit is there to catch a binary that hangs, not to judge the machine.
 */
const START_TIMEOUT_MS = 60_000;
/** Python mode: loading Pyodide takes 3.5–9 s on an idle machine, more on a busy one. */
const PYTHON_START_TIMEOUT_MS = 90_000;
/** Python mode: Pyodide's own resident memory (~180 MB loaded) on top of RSS_OVERHEAD_MB. */
const PYODIDE_RSS_MB = 256;

export interface DenoEngineConfig {
  defaultTimeoutMs: number;
  memoryMb: number;
  maxOutputBytes: number;
  limits: GuestLimits;
  callLimits: CallLimits;
  /** HostServices options except storage (middleware already includes the per-run call limit). */
  host: Omit<HostServicesOptions, "storage">;
  /** Python mode (see pyodide.ts): the guest is Pyodide, and the process may read its folder. */
  python?: boolean;
}

type Fields = Pick<ExecutionResult, "ok" | "value" | "display" | "error"> & { restartNote?: string };

const LEFT_RUNNING =
  "[ts-code-mode] The code kept running after its result (a loop of promise callbacks, say), so the sandbox process was restarted to stop it; variables from this and earlier runs were lost.";

type RunEnd = { kind: "report"; report: string; decoded: Decoded; display?: string } | { kind: "timeout" } | { kind: "cancelled" } | { kind: "exit"; exit: DenoExit } | { kind: "closed" };

interface ActiveRun {
  seq: number;
  proc: DenoProcess;
  output: RunOutput;
  finish: (end: RunEnd) => void;
}

export class DenoEngine {
  private hostServices: HostServices | null = null;
  private readonly router: CallRouter<DenoProcess>;
  private proc: DenoProcess | null = null;
  private starting: Promise<DenoProcess> | null = null;
  private preparing: Promise<void> | null = null;
  private dir: string | null = null;
  private scriptPath = "";
  private binary = "";
  /** Python mode: the Pyodide folder, the one path the process may read. */
  private readable: string | undefined;
  private budget = RunBudget.idle("sandbox");
  private active: ActiveRun | null = null;
  private runSeq = 0;
  private notice: string | null = null;
  private readonly queue = new SerialQueue();
  private readonly console: GuestConsole;
  private readonly stopWaiters = new Map<number, (confirmed: boolean) => void>();
  /** Python mode: runs already concluded (stopped) whose own report the host waits for. */
  private readonly reportWaiters = new Map<number, (ended: boolean) => void>();
  /** Processes the engine is ending on purpose (their exit is not a crash). */
  private readonly ending = new WeakSet<DenoProcess>();
  /** Processes the engine ended because they went over the memory limit. */
  private readonly overMemory = new WeakSet<DenoProcess>();
  private closed = false;
  /** Aborted by close(): a close during the first Pyodide snapshot build neither waits for it nor leaves its process. */
  private readonly closing = new AbortController();

  /** Codec options, made once: they are used on every call (a literal with a conditional spread costs V8 several times more). */
  private readonly dataDecoding: DecodeOptions;
  private readonly displayDecoding: DecodeOptions;
  private readonly replyEncoding: EncodeOptions;

  constructor(private readonly config: DenoEngineConfig) {
    const { maxDepth, maxBytes } = config.limits;
    this.dataDecoding = { strictKeys: true, maxDepth: maxDepth + 1 };
    this.displayDecoding = { strictKeys: true, maxDepth: maxDepth + 1, opaque: (text: string) => new Opaque(text) };
    this.replyEncoding = { mode: "data", maxDepth, maxBytes };
    // Calls arrive as frames from the deno process, never inside a sandbox entry: dispatched at once.
    this.router = new CallRouter<DenoProcess>(config.callLimits, (origin, ok, value) => this.settle(origin, ok, value), true);
    this.console = createSandboxConsole(() => this.active?.output ?? null);
  }

  get host(): HostServices | null {
    return this.hostServices;
  }

  /** Process id of the current deno process (diagnostics and tests), or null. */
  get pid(): number | null {
    return this.proc?.running ? (this.proc.pid ?? null) : null;
  }

  /**
   * Start the guest process before the session is known (ExecutorPool keeps such spares): for
   * Python this is the multi-second Pyodide load, done before anyone waits for it.
   */
  async prestart(): Promise<void> {
    if (this.closed || this.hostServices || this.proc) return;
    await this.prepare();
    await this.ensureProcess();
  }

  /** A prestarted process is alive and ready, and no session is bound yet. */
  get warm(): boolean {
    return !this.closed && this.hostServices === null && this.starting === null && this.proc?.running === true;
  }

  /** Settles when the current process exits (ExecutorPool replaces a spare that died while idle). */
  get guestExited(): Promise<unknown> | undefined {
    return this.proc?.exited;
  }

  async start(storage: StorageBackend): Promise<void> {
    if (this.closed) throw new ValidationError("SandboxExecutor is closed; create a new one");
    if (this.hostServices) return;
    const host = await HostServices.create({ storage, ...this.config.host });
    this.hostServices = host;
    this.router.attach(new RpcProvider(host, (m) => this.router.deliver(m), () => this.budget.callContext()));
    try {
      // Python: the preparation (which may make the Pyodide snapshot, seconds, the first time)
      // and the load run in the background; the first run waits for them and reports a failure
      // as an ExecutorStartError. A missing package is still reported here. TypeScript's process
      // is ready in ~40 ms.
      if (this.config.python) {
        denoBinaryPath();
        (await import("./pyodide.js")).pyodideFolder();
        void this.ensureProcess().catch(() => undefined);
      } else {
        await this.prepare();
        await this.ensureProcess();
      }
    } catch (err) {
      this.hostServices = null;
      await host.close();
      await this.removeDir();
      throw err;
    }
  }

  /** The private folder with the guest program and the deno-dir blocker (once per engine). */
  private prepare(): Promise<void> {
    this.preparing ??= (async () => {
      this.binary = denoBinaryPath();
      const prelude = this.config.python ? await this.pythonPrelude() : undefined;
      this.dir = await mkdtemp(path.join(os.tmpdir(), "tcm-deno-"));
      this.scriptPath = path.join(this.dir, "guest.js");
      await writeFile(this.scriptPath, denoGuestProgram(this.config.limits, prelude));
      // A regular file: the deno dir is set below it, so nothing can ever be created there.
      await writeFile(path.join(this.dir, DENO_DIR_BLOCKER), "");
    })();
    const preparing = this.preparing;
    // A failed preparation can be retried (by the next start()).
    preparing.catch(() => {
      if (this.preparing === preparing) this.preparing = null;
    });
    return preparing;
  }

  run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    return this.queue.run(() => this.runNow(code, options));
  }

  /** Python mode: Pyodide's folder becomes readable, and the guest program loads it first. */
  private async pythonPrelude(): Promise<string> {
    const [{ pyodideFolder, pyodidePrelude }, { pythonRuntimePath }] = await Promise.all([import("./pyodide.js"), import("../../python/executor.js")]);
    this.readable = pyodideFolder();
    // runtime.py and the modules it loads from its folder (workflow_signature.py, ...).
    const guestDir = path.dirname(pythonRuntimePath());
    const names = (await readdir(guestDir)).filter((n) => n.endsWith(".py"));
    const files = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await readFile(path.join(guestDir, n), "utf8")] as const)));
    // The interpreter starts from the host's memory snapshot (pyodide-snapshot.ts) when there is
    // one: the process may then also read that one file.
    const { pyodideSnapshot } = await import("./pyodide-snapshot.js");
    const snapshot = await pyodideSnapshot(this.binary, this.readable, files, this.config.memoryMb, this.closing.signal);
    if (snapshot) this.readable = `${this.readable},${snapshot.file}`;
    return pyodidePrelude(pyodideFolder(), files, snapshot);
  }

  async reset(): Promise<void> {
    await this.queue.run(async () => {
      if (this.closed || !this.hostServices) return;
      this.console.clear();
      await this.dropProcess();
      await this.ensureProcess().catch(() => undefined);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    this.budget.abort("the executor was closed");
    this.active?.finish({ kind: "closed" });
    await this.preparing?.catch(() => undefined);
    // A process still starting is killed, not waited for: no run will use it, and its start can
    // take seconds (a Pyodide load). An ExecutorPool closes a spare that is still starting when
    // `mcp --http` or `serve` shuts down.
    if (this.starting) await this.dropProcess();
    await this.starting?.catch(() => undefined);
    this.router.drop(() => true);
    this.console.clear();
    await this.dropProcess();
    await this.removeDir();
    const host = this.hostServices;
    this.hostServices = null;
    await host?.close();
  }

  // ---- runs -----------------------------------------------------------------------------------

  private async runNow(code: string, options: RunOptions): Promise<ExecutionResult> {
    const startedAt = performance.now();
    // Python is not prepared on the host: Pyodide parses it and reports its SyntaxError.
    const admitted = admitRun(code, { closed: this.closed, started: this.hostServices !== null }, startedAt, this.config.python ? (c) => c : undefined, options.prelude);
    if (admitted.result) return admitted.result;
    const { script } = admitted;
    let proc: DenoProcess;
    try {
      proc = await this.ensureProcess();
    } catch (err) {
      return errorResult({ name: "ExecutorStartError", message: `The sandbox could not start: ${err instanceof Error ? err.message : String(err)}` }, startedAt);
    }
    if (options.signal?.aborted) return errorResult(cancelledError("It had not started."), startedAt);
    const notice = this.takeNotice();
    const timeoutMs = options.timeoutMs ?? this.config.defaultTimeoutMs;
    this.budget = new RunBudget(timeoutMs, "sandbox", options.runId);
    const streamer = streamerFor(options.onOutput);
    const output = newRunOutput(this.config.maxOutputBytes, streamer);
    const seq = ++this.runSeq;
    let fields: Fields;
    let stopListening = () => undefined as void;
    try {
      const end = await new Promise<RunEnd>((resolve) => {
        const timer = setTimeout(() => finish({ kind: "timeout" }), timeoutMs);
        const capBytes = (this.config.memoryMb + RSS_OVERHEAD_MB + (this.config.python ? PYODIDE_RSS_MB : 0)) * 1_048_576;
        const watch = setInterval(() => {
          const rss = proc.rssBytes();
          if (rss !== null && rss > capBytes) {
            this.overMemory.add(proc);
            void proc.kill();
          }
        }, RSS_CHECK_MS);
        const finish = (e: RunEnd) => {
          clearTimeout(timer);
          clearInterval(watch);
          stopListening();
          if (this.active?.seq === seq) this.active = null;
          resolve(e);
        };
        this.active = { seq, proc, output, finish };
        // A cancel stops the run as its deadline would.
        stopListening = onAbort(options.signal, () => finish({ kind: "cancelled" }));
        // The process's exit reaches the run through onExit (no handler piles up per run).
        if (!proc.running) finish({ kind: "exit", exit: { code: null, signal: null, stderrTail: "", killed: false } });
        else {
          proc.resume();
          proc.send({ t: "run", seq, script });
        }
      });
      // The output of the run stays writable until its end is handled (nothing arrives after it).
      fields = await this.conclude(end, seq, proc, timeoutMs);
      // The run's process was dropped while it ended (timeout, crash, memory, code left running).
      if (this.proc !== proc && !this.closed) recordExecutorRestart("sandbox", fields.error?.name ?? "LeftRunning");
    } finally {
      stopListening();
      streamer?.close();
      if (this.active?.seq === seq) this.active = null;
      this.hostServices?.toolSessions.endRun(this.budget.id);
      this.budget = RunBudget.idle("sandbox");
    }
    const { restartNote, ...result } = fields;
    const stderr = [notice, output.stderr.text(), restartNote].filter((t) => t).join("\n");
    return {
      ...result,
      stdout: output.stdout.text(),
      stderr,
      durationMs: performance.now() - startedAt,
    };
  }

  private async conclude(end: RunEnd, seq: number, proc: DenoProcess, timeoutMs: number): Promise<Fields> {
    const fail = (error: ExecutionError): Fields => ({ ok: false, value: undefined, display: "", error });
    const memoryMb = this.config.memoryMb;
    switch (end.kind) {
      case "closed":
        return fail({ name: "SessionClosedError", message: "The executor was closed while the code was running." });
      case "report": {
        const { report, decoded } = end;
        if (report === "uncaught") {
          // A timer callback threw: the run ends as an uncaught exception would end a process.
          this.stopRun(seq, proc, "an exception in a timer callback ended the run");
          const kept = await this.askToStop(proc, seq);
          const error = uncaughtError(decoded.value, memoryMb);
          return fail(kept ? error : { ...error, message: `${error.message}. The sandbox was restarted, so variables from earlier runs were lost.` });
        }
        // Timers do not outlive their run (the driver dropped them with the report); calls left
        // running may still settle later, and their continuations run with the next run.
        const quiet = await this.askToStop(proc, seq, false);
        const fields: Fields =
          report === "value" || (report === "unencodable" && end.display !== undefined)
            ? { ok: true, ...valueFields(report === "value" ? decoded : { value: undefined, opaque: true }), ...(end.display !== undefined ? { display: end.display } : {}), error: null }
            : report === "unencodable"
              ? { ok: true, ...unencodableFields(String(decoded.value)), error: null }
              : fail(thrownError(decoded.value, memoryMb));
        if (!quiet) fields.restartNote = LEFT_RUNNING;
        return fields;
      }
      case "timeout": {
        const reason = `the run timed out after ${timeoutMs} ms`;
        const kept = this.config.python ? await this.stopPythonRun(seq, proc, reason) : (this.stopRun(seq, proc, reason), await this.askToStop(proc, seq));
        return fail(timeoutError(timeoutMs, kept ? "kept" : "lost"));
      }
      case "cancelled": {
        const reason = "the run was cancelled";
        const kept = this.config.python ? await this.stopPythonRun(seq, proc, reason) : (this.stopRun(seq, proc, reason), await this.askToStop(proc, seq));
        return fail(cancelledError(kept ? "The code was stopped; variables are kept." : "The code was stopped by restarting the sandbox process, so variables from earlier runs were lost."));
      }
      case "exit": {
        this.stopRun(seq, proc, "the sandbox process ended");
        this.forgetProcess(proc);
        this.prewarm();
        if (this.overMemory.has(proc) || /out of memory|heap limit|allocation failed/i.test(end.exit.stderrTail)) return fail(memoryError(memoryMb, true));
        const tail = end.exit.stderrTail.trim().split("\n").slice(-5).join("\n");
        return fail({
          name: "SandboxCrashError",
          message: `The sandbox process ended unexpectedly (${describeExit(end.exit)})${tail ? `: ${tail}` : ""}. The sandbox was restarted, so variables from earlier runs were lost.`,
        });
      }
    }
  }

  /** End what a stopped run left on the host: its calls are aborted and their replies ignored. */
  /**
   * Python mode: a Python stack suspended in a namespace call cannot be dropped in place, so the
   * run's pending calls fail in the guest with RunInterrupted (a BaseException, which `except
   * Exception` does not catch): an idle run unwinds and reports by itself within STOP_GRACE,
   * and its variables are kept. A busy one (or one that swallows even that) loses its process.
   */
  private async stopPythonRun(seq: number, proc: DenoProcess, reason: string): Promise<boolean> {
    this.budget.abort(reason);
    const ended = new Promise<boolean>((resolve) => {
      const cancel = whenBusy(proc.pid, STOP_GRACE, () => done(false));
      const done = (ok: boolean) => {
        cancel();
        this.reportWaiters.delete(seq);
        resolve(ok);
      };
      this.reportWaiters.set(seq, done);
    });
    this.router.interrupt((origin) => origin.run === seq && origin.target === proc, { name: "RunInterrupted", message: `${reason}; the code was interrupted` });
    this.router.drop((origin) => origin.target === proc);
    proc.send({ t: "interrupt", seq });
    if (!(await ended)) {
      await this.dropProcess(proc);
      this.prewarm();
      return false;
    }
    return this.askToStop(proc, seq, false);
  }

  private stopRun(seq: number, proc: DenoProcess, reason: string): void {
    this.budget.abort(reason);
    this.router.drop((origin) => origin.run === seq || origin.target === proc);
  }

  /**
   * Ask the guest to drop its timers (and, with `calls`, its pending calls), then freeze the
   * process until the next run, so nothing of the guest executes between runs (guest code never
   * outlives its run). True when the guest confirmed in time (its state is consistent, variables
   * are kept); otherwise it is busy (a runaway loop, even after its result) and is killed.
   */
  private async askToStop(proc: DenoProcess, seq: number, calls = true): Promise<boolean> {
    // Python mode: a stopped run's coroutine (or a Python stack suspended in a call) cannot be
    // dropped in place, so only a run that ended by itself keeps its process.
    const confirmed = this.config.python && calls ? false : await new Promise<boolean>((resolve) => {
      const cancel = whenBusy(proc.pid, STOP_GRACE, () => done(false));
      const done = (ok: boolean) => {
        cancel();
        this.stopWaiters.delete(seq);
        resolve(ok);
      };
      // onExit answers false if the process ends meanwhile.
      this.stopWaiters.set(seq, done);
      proc.send({ t: "end", seq, calls });
    });
    if (confirmed && proc.running) {
      proc.freeze();
      return true;
    }
    await this.dropProcess(proc);
    this.prewarm();
    return false;
  }

  // ---- frames from the guest -------------------------------------------------------------------

  private onFrame(proc: DenoProcess, frame: Frame): void {
    if (proc !== this.proc) return;
    const h = frame.header;
    try {
      switch (h["t"]) {
        case "call":
          this.onCall(proc, num(h["id"]), str(h["ns"]), str(h["op"]), str(h["json"]), frame.buffers);
          return;
        case "console": {
          const method = str(h["method"]);
          if (!(CONSOLE_METHODS as readonly string[]).includes(method)) throw new TypeError("unknown console method");
          if (this.active?.proc !== proc) return;
          let args: unknown;
          try {
            args = this.decodeFromGuest(str(h["json"]), frame.buffers, true).value;
          } catch (err) {
            args = [`[console.${method}: arguments could not be shown: ${(err as Error).message}]`];
          }
          this.console.methods[method]?.(...(Array.isArray(args) ? args : [args]));
          return;
        }
        case "report":
          this.onReport(proc, num(h["seq"]), str(h["kind"]), str(h["json"]), frame.buffers, typeof h["display"] === "string" ? h["display"].slice(0, MAX_DISPLAY_CHARS) : undefined);
          return;
        case "stopped":
          this.stopWaiters.get(num(h["seq"]))?.(true);
          return;
        case "write": {
          // Python mode: print() and sys.stderr, as written (ByteCappedOutput bounds them).
          const stream = str(h["stream"]);
          if (stream !== "stdout" && stream !== "stderr") throw new TypeError("unknown stream");
          if (this.active?.proc === proc) this.active.output[stream].write(str(h["text"]));
          return;
        }
        default:
          throw new TypeError("unknown frame");
      }
    } catch {
      // A frame the driver would never send: agent code wrote to the channel. It is ignored.
    }
  }

  private onCall(proc: DenoProcess, guestId: number, ns: string, op: string, json: string, buffers: ArrayBuffer[]): void {
    const origin: CallOrigin<DenoProcess> = { target: proc, guestId, run: this.active?.proc === proc ? this.active.seq : 0 };
    if (origin.run === 0) {
      // Guest code running after its run's result (in the moment before the process is frozen):
      // it never reaches the host's services.
      this.router.reject(origin, toWireError(new ValidationError(`${ns}.${op}: namespace calls are only possible while a run is in progress`), `${ns}.${op}`));
      return;
    }
    const bytes = buffers.reduce((n, b) => n + b.byteLength, json.length);
    let args: unknown;
    try {
      args = this.decodeFromGuest(json, buffers, false).value;
      if (!Array.isArray(args)) throw new BoundaryError("the arguments must be an array");
    } catch (err) {
      this.router.reject(origin, toWireError(new ValidationError((err as Error).message), `${ns}.${op}`));
      return;
    }
    this.router.submit(origin, ns, op, args as unknown[], bytes);
  }

  private onReport(proc: DenoProcess, seq: number, kind: string, json: string, buffers: ArrayBuffer[], display?: string): void {
    const run = this.active;
    if (!run || run.proc !== proc || run.seq !== seq) {
      this.reportWaiters.get(seq)?.(true);
      return;
    }
    const shown = display !== undefined && kind !== "error" && kind !== "uncaught" ? { display } : {};
    if (kind === "unencodable") {
      run.finish({ kind: "report", report: kind, decoded: { value: decodeString(json), opaque: true }, ...shown });
      return;
    }
    if (kind !== "value" && kind !== "error" && kind !== "uncaught") return;
    let decoded: Decoded;
    try {
      decoded = this.decodeFromGuest(json, buffers, true);
    } catch (err) {
      if (kind === "value") {
        run.finish({ kind: "report", report: "unencodable", decoded: { value: (err as Error).message, opaque: true }, ...shown });
        return;
      }
      decoded = { value: err, opaque: false };
    }
    run.finish({ kind: "report", report: kind, decoded, ...shown });
  }

  /** Decodes what the guest sent, checking its size too (the guest side can be tampered with). */
  private decodeFromGuest(json: string, buffers: ArrayBuffer[], display: boolean): Decoded {
    const { maxBytes } = this.config.limits;
    let size = json.length;
    for (const b of buffers) size += b.byteLength;
    if (size > maxBytes) throw new BoundaryError(`the value is larger than ${Math.round(maxBytes / 1_048_576)} MB, the most that can cross the sandbox boundary`);
    return decode(json, buffers, display ? this.displayDecoding : this.dataDecoding);
  }

  /** A reply (or an immediate refusal) for a call: into the process that made it, if it is still the current one. */
  private settle(origin: CallOrigin<DenoProcess>, ok: boolean, value: unknown): void {
    const proc = origin.target;
    if (proc !== this.proc || !proc.running) return;
    let encoded;
    let good = ok;
    try {
      encoded = encode(value, this.replyEncoding);
    } catch (err) {
      good = false;
      encoded = encode({ name: "DataCloneError", message: `the result could not be copied into the sandbox: ${(err as Error).message}` }, { mode: "data", maxDepth: 4, maxBytes: 1_000_000 });
    }
    proc.send({ t: "settle", id: origin.guestId, ok: good, json: encoded.json }, encoded.buffers);
  }

  // ---- the process ------------------------------------------------------------------------------

  private async ensureProcess(): Promise<DenoProcess> {
    // The guest program must exist (a Python start does not wait for it; see start()).
    await this.prepare();
    // close() may have come while the program was being prepared: no process after it.
    if (this.closed) throw new ValidationError("SandboxExecutor is closed; create a new one");
    // A process still starting (Pyodide loading) is not ready for a run: wait for it.
    if (this.starting) return this.starting;
    if (this.proc?.running) return this.proc;
    this.starting ??= this.spawn().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async spawn(): Promise<DenoProcess> {
    const dir = this.dir ?? os.tmpdir();
    const proc: DenoProcess = new DenoProcess(this.binary, this.scriptPath, dir, path.join(dir, DENO_DIR_BLOCKER), this.config.memoryMb, (frame) => this.onFrame(proc, frame), this.readable);
    this.proc = proc;
    void proc.exited.then((exit) => this.onExit(proc, exit));
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        proc.ready,
        new Promise<never>((_, reject) => {
          const ms = this.config.python ? PYTHON_START_TIMEOUT_MS : START_TIMEOUT_MS;
          timer = setTimeout(() => reject(new Error(`the deno process did not start within ${ms} ms`)), ms);
        }),
      ]);
    } catch (err) {
      await this.dropProcess(proc);
      const exit = await proc.exited;
      const tail = exit.stderrTail.trim().split("\n").slice(-5).join("\n");
      throw new Error(`${(err as Error).message}${tail ? `: ${tail}` : ""}`);
    } finally {
      clearTimeout(timer);
    }
    if (this.closed) {
      await this.dropProcess(proc);
      throw new ValidationError("the executor was closed");
    }
    return proc;
  }

  /** A process ended: the run using it ends; if it ended by itself between runs, the next run says so. */
  private onExit(proc: DenoProcess, exit: DenoExit): void {
    for (const waiter of [...this.stopWaiters.values()]) waiter(false);
    for (const waiter of [...this.reportWaiters.values()]) waiter(false);
    if (this.active?.proc === proc) {
      this.active.finish({ kind: "exit", exit });
      return;
    }
    if (this.ending.has(proc) || this.closed) return;
    if (this.proc === proc && !this.active) {
      this.notice = "[ts-code-mode] The sandbox process ended between runs and was restarted; variables from earlier runs were lost.";
    }
    this.forgetProcess(proc);
    if (!this.active) this.prewarm();
  }

  private forgetProcess(proc: DenoProcess): void {
    this.router.drop((origin) => origin.target === proc);
    if (this.proc === proc) this.proc = null;
  }

  /** End a process (the current one by default) and wait until it is gone. */
  private async dropProcess(proc: DenoProcess | null = this.proc): Promise<void> {
    if (!proc) return;
    this.ending.add(proc);
    this.forgetProcess(proc);
    await proc.kill();
  }

  /** Start the next process in the background so the next run does not wait for it. */
  private prewarm(): void {
    if (!this.closed && this.hostServices) void this.ensureProcess().catch(() => undefined);
  }

  private async removeDir(): Promise<void> {
    const dir = this.dir;
    this.dir = null;
    this.preparing = null;
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }

  private takeNotice(): string | null {
    const notice = this.notice;
    this.notice = null;
    return notice;
  }
}

function str(v: unknown): string {
  if (typeof v !== "string") throw new TypeError("expected a string");
  return v;
}

function num(v: unknown): number {
  if (typeof v !== "number") throw new TypeError("expected a number");
  return v;
}

function decodeString(json: string): string {
  try {
    const v: unknown = JSON.parse(json);
    return typeof v === "string" ? v : json;
  } catch {
    return json;
  }
}
