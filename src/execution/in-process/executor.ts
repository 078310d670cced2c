/**
 * InProcessExecutor: the agent's code runs in a node:vm context of the host process. Fastest, and
 * for trusted code only — node:vm is not a security boundary, and the guest gets Node's globals
 * (process, require, fetch, timers).
 *
 * What a timeout can stop here: vm's `timeout` interrupts synchronous code that runs before the
 * snippet's first `await`. Code that keeps running after an await (an async loop, a sync loop in a
 * continuation or timer) cannot be interrupted inside the host process; on timeout the run returns
 * a TimeoutError, the guest's timers are cleared, its tool calls are aborted, and the rest is
 * abandoned. `capabilities()` says so. Use SubprocessExecutor when code must really be stopped.
 */
import { admitRun } from "../admit.js";
import { ValidationError } from "../../errors.js";
import type { StorageBackend } from "../../storage/protocol.js";
import type { ToolRegistry } from "../../tools/registry.js";
import { toolsOption, type CodeToolSet, type CodeToolsInput } from "../../tools/code/tool-set.js";
import { HostServices } from "../host.js";
import { depsServiceFor, validateDepsConfig, type DepsConfig } from "../../deps/index.js";
import { installConfiguredDeps } from "../deps-startup.js";
import { depsConfigOf, hostLimitsOf, parseExecutorOptions, type ExecutorOptions } from "../options.js";
import type { CapabilityReport, ExecutionResult, Executor, RunOptions } from "../protocol.js";
import { ReplEngine } from "../repl/engine.js";
import { CANCELLED_ERROR_NAME, cancelledError } from "../output-stream.js";
import { errorResult } from "../result.js";
import { RunBudget } from "../run-budget.js";
import { SerialQueue } from "../../serial-queue.js";
import { describe, registerGuestRealm } from "./guest-failures.js";

export interface InProcessExecutorOptions extends ExecutorOptions, DepsConfig {
  /**
   * Tools defined in code — `[defineTool(...)]`, `{ weather: tool(...) }`, `{ github: { createIssue } }`,
   * an MCP client or server parameters (see tools/code/tool-set.ts) — beside the YAML tools of
   * `toolsPath`; they run on the host. Or a ready ToolRegistry, which wins over `toolsPath`.
   */
  tools?: ToolRegistry | CodeToolsInput;
}

export class InProcessExecutor implements Executor {
  readonly kind = "in-process";
  /** Runs code with Node's authority, so workflows it saves are trusted (src/workflows/provenance.ts). */
  readonly trust = "trusted" as const;
  readonly runsPreludes = true;
  /** skills.run may start a script on the host (this executor already runs code with the host's authority). */
  readonly runsCommands = true;
  private readonly options: ReturnType<typeof parseExecutorOptions>;
  private readonly registry: ToolRegistry | undefined;
  private readonly codeTools: CodeToolSet | undefined;
  private hostServices: HostServices | null = null;
  private engine: ReplEngine | null = null;
  private budget = RunBudget.idle(this.kind);
  private readonly queue = new SerialQueue();
  private closed = false;
  private callsInFlight = 0;

  constructor(options: InProcessExecutorOptions = {}) {
    const { tools, ...rest } = options;
    this.options = parseExecutorOptions(rest, "InProcessExecutor");
    validateDepsConfig(this.options);
    ({ registry: this.registry, codeTools: this.codeTools } = toolsOption(tools, "InProcessExecutor({ tools })"));
  }

  get host(): HostServices | null {
    return this.hostServices;
  }

  capabilities(): CapabilityReport {
    return {
      capabilities: this.options.allowRuntimeDeps === false ? ["timeout", "reset"] : ["timeout", "reset", "depsInstall"],
      notes: [
        "timeout: stops synchronous code that runs before the snippet's first await; after that, a timed-out run returns TimeoutError, its timers are cleared and its tool calls aborted, but code still running (an async loop, a sync loop after an await) cannot be interrupted and blocks the host process.",
        "cancel (RunOptions.signal): a run waiting (on a tool call, a timer, a promise) is abandoned like a timed-out one, with a CancelledError; synchronous code and a microtask loop (for (;;) await null) block the host's event loop, so the abort is not even seen until they yield — only the timeout stops such code before its first await.",
        "No isolation: the code runs inside the host process with Node's full authority (files, network, environment). Use it for trusted code only.",
        "No memory limit: an allocation loop can exhaust the host process.",
        "Failures: a rejected promise nobody awaited or an exception thrown from a timer, immediate, microtask or process.nextTick in the agent's code is reported on the run's stderr (or the next run's) and does not end the host process; process.exit() does.",
        "Runs end: timers, intervals and immediates the code left are cleared when its run ends, and a namespace call made after its run ended is refused.",
        "deps: packages installed with deps.add() (into the deps folder) or already in the project can be imported.",
      ],
    };
  }

  async start(storage: StorageBackend): Promise<void> {
    if (this.closed) throw new ValidationError("InProcessExecutor is closed; create a new one");
    if (this.hostServices) return;
    const deps = depsServiceFor(depsConfigOf(this.options), storage);
    await installConfiguredDeps(deps, this.options.onDepsOutput);
    const host = await HostServices.create({
      storage,
      deps,
      origin: this,
      ...(this.registry ? { tools: this.registry } : { toolsPath: this.options.toolsPath }),
      ...(this.codeTools ? { codeTools: this.codeTools } : {}),
      ...(this.options.middleware ? { middleware: this.options.middleware } : {}),
      ...(this.options.search ? { search: this.options.search } : {}),
      ...hostLimitsOf(this.options),
    });
    this.hostServices = host;
    const report = (text: string) => this.engine?.report(text);
    this.engine = new ReplEngine({
      importBases: [deps.dir, process.cwd()],
      onAsyncTimeout: "abandon",
      // Arguments are copied into the host realm, as they would be across a process boundary:
      // the host's plain-object and JSON checks then see host objects, and the guest cannot
      // mutate what the host is working on.
      // One `then`, not an async function awaiting dispatch(): each promise on a call's path costs
      // twice under the write deadline's promise hooks (see RpcProvider.handle).
      call: (ns, op, args) => {
        let held: Promise<{ value: unknown; release: () => void }>;
        try {
          held = host.dispatchHeld(ns, op, copyArgs(args), this.budget.callContext());
        } catch (err) {
          return Promise.reject(err);
        }
        this.callsInFlight++;
        return held.then(
          ({ value, release }) => {
            this.callsInFlight--;
            // In process the reply is the guest's from here on; nothing of it waits in the host.
            release();
            return value;
          },
          (err: unknown) => {
            this.callsInFlight--;
            throw err;
          },
        );
      },
      // The agent's floating failures are reported on the run's stderr instead of ending the host.
      onCallbackError: (err) => report(`Uncaught exception (outside the awaited code, e.g. thrown from a timer): ${describe(err)}\n`),
      onContext: (realmRoot) => registerGuestRealm(realmRoot, report),
      settleBeforeResult: true,
    });
  }

  run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    return this.queue.run(() => this.runNow(code, options));
  }

  private async runNow(code: string, options: RunOptions): Promise<ExecutionResult> {
    const startedAt = performance.now();
    const engine = this.engine;
    const admitted = admitRun(code, { closed: this.closed, started: engine !== null }, startedAt, undefined, options.prelude);
    if (admitted.result) return admitted.result;
    const { script } = admitted;
    if (options.signal?.aborted) return errorResult(cancelledError("It had not started."), startedAt);
    const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs;
    this.budget = new RunBudget(timeoutMs, this.kind, options.runId);
    try {
      // admitted: started, so the engine exists
      const result = await engine!.run(script, timeoutMs, { ...(options.onOutput ? { onOutput: options.onOutput } : {}), ...(options.signal ? { signal: options.signal } : {}) });
      // Tool calls still in flight (from code the run did not await, or a stopped run) end with the run.
      const stopped = result.error?.name === "TimeoutError" || result.error?.name === CANCELLED_ERROR_NAME;
      if (this.callsInFlight > 0 || stopped) this.budget.abort(stopped ? `the run was stopped (${result.error?.name})` : "the run ended");
      // Copied, then set: on Node 20 `{ ...result, durationMs }` takes V8's slow path (microseconds, every run).
      const final = Object.assign({}, result);
      final.durationMs = performance.now() - startedAt;
      return final;
    } finally {
      this.hostServices?.toolSessions.endRun(this.budget.id);
      this.budget = RunBudget.idle(this.kind);
    }
  }

  async reset(): Promise<void> {
    await this.queue.run(async () => {
      if (!this.closed) this.engine?.reset();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.budget.abort("the executor was closed");
    this.engine?.dispose();
    this.engine = null;
    const host = this.hostServices;
    this.hostServices = null;
    await host?.close();
  }
}

function copyArgs(args: unknown[]): unknown[] {
  try {
    return structuredClone(args);
  } catch (err) {
    throw new ValidationError(
      `arguments must be plain data (objects, arrays, strings, numbers, booleans, Uint8Array, Map, Date, ...); ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
