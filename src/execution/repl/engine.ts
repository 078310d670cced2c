/**
 * ReplEngine: runs prepared snippets in a node:vm context that keeps its globals between runs.
 * It is the one REPL implementation behind the in-process executor (in the host process) and the
 * subprocess executor (inside the child). It does not parse TypeScript: callers hand it scripts
 * already prepared by `prepareSnippet` (in the child's case, prepared on the host, so the child
 * never loads a compiler and starts fast).
 *
 * A vm `timeout` interrupts synchronous code up to the snippet's first `await`. What happens after
 * that depends on `onAsyncTimeout`: the in-process executor abandons the run (its timers are
 * cleared); the subprocess child leaves it to the host, which kills the process.
 *
 * Guest code never outlives its run: when a run ends, the timers, intervals and immediates the
 * guest left are cleared, and a namespace call made while no run is in progress is refused.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import vm from "node:vm";
import { createNamespaces, type HostCall } from "../guest/namespaces.js";
import { createGuestConsole, newOutput, type RunOutput } from "../output.js";
import { cancelledError, onAbort, streamerFor, type OutputListener } from "../output-stream.js";
import { IMPORT_FN } from "../guest/import-fn.js";
import { ADOPT_SOURCE } from "./adopt.js";
import type { ExecutionError, ExecutionResult } from "../protocol.js";
import { cloneValue, errorFromThrown, renderDisplay } from "../result.js";
import { fromWireError, isWireError, toWireError } from "../wire-error.js";

export interface ReplEngineOptions {
  /** Reaches the host's namespace operations; may reject with an Error or a WireError. */
  call: HostCall;
  /** "abandon": after timeoutMs a still-pending run resolves with TimeoutError (in-process). "none": never (the host enforces it). */
  onAsyncTimeout: "abandon" | "none";
  /** Folders packages are imported from, in order (`import x from "pkg"`, `require("pkg")`): the deps folder, then the project. Default: [cwd]. */
  importBases?: string[];
  /** Whether the guest sees `process` and `require`. Default true. */
  nodeGlobals?: boolean;
  /**
   * Where an exception thrown by a guest timer, immediate or microtask goes. Default: it is
   * rethrown (an uncaught exception of the process, which the subprocess child reports and dies
   * of). The in-process executor reports it on the run's stderr instead.
   */
  onCallbackError?: (error: unknown) => void;
  /**
   * Wait one turn of the event loop before returning a result, so that the run's unhandled
   * rejections (which Node reports once the microtask queue drains) land on its own stderr rather
   * than the next run's. Costs a few µs per run; the in-process executor wants it, the child not.
   */
  settleBeforeResult?: boolean;
  /** Told each new vm context's own `Object.prototype`, the root of every object made in it (see in-process/guest-failures.ts). */
  onContext?: (realmRoot: object) => void;
  /**
   * How synchronous code is stopped at its deadline. "timeout" (default): vm's own timeout, which
   * starts and joins a watchdog thread on every run (~0.1 ms, most of a trivial run in the child).
   * "sigint": the host sends SIGINT at the deadline and the script runs with `breakOnSigint`; in a
   * process started with `--trace-sigint` Node keeps its SIGINT watchdog thread running, so a run
   * costs a few µs. Only for a process whose host interrupts it (the subprocess child).
   */
  interrupt?: "timeout" | "sigint";
}

type Timer = ReturnType<typeof setTimeout>;

export interface EngineRunOptions {
  /** Told the run's output while it runs (batched, see output-stream.ts). */
  onOutput?: OutputListener;
  /** With onAsyncTimeout "abandon": abandons the run as a timeout would, with a CancelledError. */
  signal?: AbortSignal;
  /**
   * Whatever onAsyncTimeout says: abort it to end the run now, as its timeout would ("timeout" as
   * the reason) or as a cancel (any other reason), keeping the variables. The subprocess child's
   * host aborts it when the guest is idle at the deadline (a StopMessage).
   */
  stop?: AbortSignal;
  /**
   * With interrupt "sigint": called when the host's SIGINT stopped this run's script, i.e. this run
   * took the signal (the subprocess child tells its host, see rpc/protocol.ts ResultMessage).
   */
  onInterrupted?: () => void;
}

/** Failures reported between runs are kept for the next run up to this many characters. */
const LATE_NOTICE_CHARS = 8_192;

/**
 * How a snippet is compiled (issue 35.7). Node keeps ~0.6 KB for every `vm.Script` it ever
 * compiled (for a snippet wrapped in a function, ~1 KB), freed neither when the Script object nor
 * when its context is collected: a session that ran 20,000 distinct snippets held ~20 MB more. The
 * context's own `eval` compiles through V8 alone, which keeps ~80 bytes per distinct source. So a
 * snippet is not compiled as a Script: one trampoline Script, compiled once per process, takes the
 * source from a slot on the context's global (set just before, removed by the trampoline itself)
 * and hands it to the context's intrinsic indirect eval (captured when the context was made, so a
 * guest that replaced `globalThis.eval` changes nothing). Running the trampoline with the vm
 * `timeout` (or `breakOnSigint`) bounds the snippet's synchronous code as before. A prepared snippet
 * is one async IIFE expression with no top-level declarations (prepare.ts), so global code run by
 * indirect eval means exactly what it meant as a Script. `//# sourceURL` keeps stack traces
 * naming `snippet.ts`.
 */
const SNIPPET_SLOT = "__tsCodeModeSnippet";
let trampoline: vm.Script | undefined;
function snippetTrampoline(): vm.Script {
  trampoline ??= new vm.Script(
    `(function () { const slot = globalThis.${SNIPPET_SLOT}; delete globalThis.${SNIPPET_SLOT}; return slot.evaluate(slot.source); })()`,
    { filename: "snippet.ts" },
  );
  return trampoline;
}
const SOURCE_URL = "\n//# sourceURL=snippet.ts";

/** Marks a compiled workflow module body: `workflows.load` returns it ready to evaluate. */
export interface CompiledWorkflow {
  name: string;
  /** CommonJS body produced by `prepareModule`. */
  compiled: string;
}

export class ReplEngine {
  private context: vm.Context;
  private output: RunOutput | null = null;
  private readonly timers = new Set<Timer>();
  private readonly immediates = new Set<ReturnType<typeof setImmediate>>();
  /** A run is in progress: the guest may call the host. */
  private active = false;
  /** Failures noticed between runs (a promise rejected after its run ended), for the next run's stderr. */
  private late = "";
  /** The context's intrinsic indirect eval: what compiles snippets (see snippetTrampoline). */
  private evaluate!: (source: string) => unknown;
  private readonly requireFromBase: NodeRequire;
  /** The context's own Promise: tells its rejections from another context's (see owns). */
  private realmPromise!: PromiseConstructor;

  constructor(private readonly options: ReplEngineOptions) {
    this.requireFromBase = chainedRequire(options.importBases?.length ? options.importBases : [process.cwd()]);
    this.context = this.createContext();
  }

  /**
   * Run one prepared script. Never rejects: problems come back in `error`.
   */
  async run(script: string, timeoutMs: number, options: EngineRunOptions = {}): Promise<ExecutionResult> {
    const startedAt = performance.now();
    const streamer = streamerFor(options.onOutput);
    const output: RunOutput = newOutput(streamer);
    if (this.late) {
      output.stderr.write(this.late);
      this.late = "";
    }
    this.output = output;
    // Fields listed, not `{ ...fields, stdout, ... }`: on Node 20 a spread followed by more properties takes V8's slow path (microseconds, every run).
    const finish = (fields: Pick<ExecutionResult, "ok" | "value" | "display" | "error">): ExecutionResult => ({
      ok: fields.ok,
      value: fields.value,
      display: fields.display,
      error: fields.error,
      stdout: output.stdout.text(),
      stderr: output.stderr.text(),
      durationMs: performance.now() - startedAt,
    });
    let timer: Timer | undefined;
    let stopListening = () => undefined as void;
    this.active = true;
    let fields: Pick<ExecutionResult, "ok" | "value" | "display" | "error">;
    try {
      const pending = this.start(script, this.options.interrupt === "sigint" ? { breakOnSigint: true, displayErrors: false } : { timeout: timeoutMs, displayErrors: false });
      let value: unknown;
      if (this.options.onAsyncTimeout === "abandon") {
        const stopped = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new AbandonedRun(timeoutMs)), Math.max(1, timeoutMs - (performance.now() - startedAt)));
          stopListening = onAbort(options.signal, () => reject(new AbandonedRun(timeoutMs, true)));
        });
        value = await Promise.race([pending, stopped]);
      } else if (options.stop) {
        const stop = options.stop;
        const stopped = new Promise<never>((_, reject) => {
          stopListening = onAbort(stop, () => reject(new AbandonedRun(timeoutMs, stop.reason !== "timeout")));
        });
        value = await Promise.race([pending, stopped]);
      } else {
        value = await pending;
      }
      fields = { ok: true, value: cloneValue(value), display: renderDisplay(value), error: null };
    } catch (thrown) {
      if ((thrown as { code?: unknown } | null)?.code === "ERR_SCRIPT_EXECUTION_INTERRUPTED") options.onInterrupted?.();
      fields = { ok: false, value: undefined, display: "", error: engineError(thrown, timeoutMs) };
    } finally {
      if (timer) clearTimeout(timer);
      stopListening();
      this.clearTimers();
    }
    try {
      // See settleBeforeResult; the guest's timers are already cleared, so none runs in this turn.
      if (this.options.settleBeforeResult) await new Promise<void>((resolve) => setImmediate(resolve));
      // What is still gathered is delivered before the result.
      streamer?.close();
      return finish(fields);
    } finally {
      this.active = false;
      this.output = null;
      this.clearTimers();
    }
  }

  /**
   * Starts a prepared snippet through the trampoline (see snippetTrampoline). A guest that defined
   * the slot's name itself, not configurable, leaves no room for it: that snippet is compiled as
   * its own Script, as before (it then keeps Node's per-Script memory).
   */
  private start(script: string, options: vm.RunningScriptOptions): Promise<unknown> {
    const slot = { evaluate: this.evaluate, source: script + SOURCE_URL };
    if (!Reflect.defineProperty(this.context, SNIPPET_SLOT, { value: slot, configurable: true, enumerable: false, writable: false })) {
      return new vm.Script(script, { filename: "snippet.ts" }).runInContext(this.context, options) as Promise<unknown>;
    }
    try {
      return snippetTrampoline().runInContext(this.context, options) as Promise<unknown>;
    } finally {
      // Already gone unless the trampoline was stopped before its first statement.
      Reflect.deleteProperty(this.context, SNIPPET_SLOT);
    }
  }

  /** Text written to the current run's stdout/stderr by something other than console (process.stdout.write); dropped between runs. */
  write(stream: "stdout" | "stderr", text: string): void {
    this.output?.[stream].write(text);
  }

  /** A failure of the guest's (unhandled rejection, throwing callback): on this run's stderr, or the next run's when none is in progress. */
  report(text: string): void {
    if (this.output) this.output.stderr.write(text);
    else if (this.late.length < LATE_NOTICE_CHARS) this.late += text.slice(0, LATE_NOTICE_CHARS - this.late.length);
  }

  /** Whether `value` was made in this engine's context (a shared child reports a rejected promise to its session). */
  owns(value: unknown): boolean {
    return value instanceof this.realmPromise;
  }

  /** Forget the agent's variables: a fresh context with fresh namespaces; timers are cleared. */
  reset(): void {
    this.clearTimers();
    this.late = "";
    this.context = this.createContext();
  }

  dispose(): void {
    this.clearTimers();
    this.output = null;
  }

  private clearTimers(): void {
    if (this.timers.size) {
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
    }
    if (this.immediates.size) {
      for (const i of this.immediates) clearImmediate(i);
      this.immediates.clear();
    }
  }

  /** A guest callback, with its exception sent to onCallbackError when one is set. */
  private guard(fn: (...a: unknown[]) => unknown, args: unknown[]): void {
    const report = this.options.onCallbackError;
    if (!report) {
      fn(...args);
      return;
    }
    try {
      fn(...args);
    } catch (err) {
      report(err);
    }
  }

  private createContext(): vm.Context {
    const context = vm.createContext({});
    this.evaluate = vm.runInContext("(0, eval)", context) as (source: string) => unknown;
    const ErrorCtor = vm.runInContext("Error", context) as ErrorConstructor;
    const GuestPromise = vm.runInContext("Promise", context) as PromiseConstructor;
    this.realmPromise = GuestPromise;
    this.options.onContext?.(vm.runInContext("Object.prototype", context) as object);
    /** A host promise as one of the guest's realm, so that a rejection nobody awaits is known as the guest's. */
    const own = <T>(p: Promise<T>): Promise<T> => GuestPromise.resolve(p);
    const requireFromBase = this.requireFromBase;
    const hostCall = this.options.call;
    const adopt = vm.runInContext(ADOPT_SOURCE, context) as (value: unknown) => unknown;
    // One function for the context, not a closure per call: every namespace call passes here.
    const rethrowInGuest = (err: unknown): never => {
      throw fromWireError(isWireError(err) && !(err instanceof Error) ? err : toWireError(err), ErrorCtor);
    };
    const namespaces = createNamespaces({
      ErrorCtor,
      // Results are copied into this context's realm (so `instanceof Uint8Array` holds), and
      // whatever the transport rejects with becomes an Error of this realm.
      call: (ns, op, args) => {
        if (!this.active) {
          return Promise.reject(
            fromWireError({ name: "RunEndedError", message: `${ns}.${op}: the run that made this call has ended; code left running after a run cannot call the host.` }, ErrorCtor),
          );
        }
        return hostCall(ns, op, args).then(adopt, rethrowInGuest);
      },
      compileWorkflow: (name, source) => {
        const factory = vm.runInContext(`(function (exports, require, module, tools, workflows, artifacts, deps) {${source}\n})`, context, {
          filename: `workflows/${name}.ts`,
        }) as (...args: unknown[]) => void;
        const module = { exports: {} as Record<string, unknown> };
        factory(module.exports, requireFromBase, module, namespaces.tools, namespaces.workflows, namespaces.artifacts, namespaces.deps);
        return module.exports;
      },
    });
    const timers = this.timers;
    const tracked =
      (schedule: typeof setTimeout | typeof setInterval, once: boolean) =>
      (fn: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]): Timer => {
        if (typeof fn !== "function") throw new TypeError("The callback must be a function");
        const handle: Timer = schedule(
          (...a: unknown[]) => {
            if (once) timers.delete(handle);
            this.guard(fn, a);
          },
          ms,
          ...rest,
        );
        timers.add(handle);
        return handle;
      };
    const untrack = (t: Timer) => {
      clearTimeout(t);
      timers.delete(t);
    };
    const immediates = this.immediates;
    const trackedImmediate = (fn: (...a: unknown[]) => void, ...rest: unknown[]): ReturnType<typeof setImmediate> => {
      if (typeof fn !== "function") throw new TypeError("The callback must be a function");
      const handle = setImmediate(() => {
        immediates.delete(handle);
        this.guard(fn, rest);
      });
      immediates.add(handle);
      return handle;
    };
    const untrackImmediate = (i: ReturnType<typeof setImmediate>) => {
      clearImmediate(i);
      immediates.delete(i);
    };
    const guardedMicrotask = (fn: () => void): void => {
      if (typeof fn !== "function") throw new TypeError("The callback must be a function");
      queueMicrotask(() => this.guard(fn, []));
    };
    const globals: Record<string, unknown> = {
      console: createGuestConsole(() => this.output).methods,
      setTimeout: tracked(setTimeout, true),
      setInterval: tracked(setInterval, false),
      clearTimeout: untrack,
      clearInterval: untrack,
      setImmediate: trackedImmediate,
      clearImmediate: untrackImmediate,
      queueMicrotask: guardedMicrotask,
      structuredClone,
      URL,
      URLSearchParams,
      TextEncoder,
      TextDecoder,
      Buffer,
      fetch: (...a: Parameters<typeof fetch>) => own(fetch(...a)),
      AbortController,
      AbortSignal,
      atob,
      btoa,
      performance,
      ...namespaces,
      [IMPORT_FN]: (spec: string) => own(importFrom(requireFromBase, spec)),
    };
    if (this.options.nodeGlobals !== false) Object.assign(globals, { process, require: requireFromBase });
    for (const [k, v] of Object.entries(globals)) {
      Object.defineProperty(context, k, { value: v, writable: true, configurable: true, enumerable: false });
    }
    // Node loads these on first access (Headers, Request and Response are undici, ~20 ms of a cold
    // run that never fetches; crypto is WebCrypto): the context reads them on the guest's first
    // access too, then holds them as plain writable values like the ones above.
    for (const name of LAZY_HOST_GLOBALS) {
      const settle = (value: unknown): void => {
        Object.defineProperty(context, name, { value, writable: true, configurable: true, enumerable: false });
      };
      Object.defineProperty(context, name, {
        get: () => {
          const value = globalThis[name];
          settle(value);
          return value;
        },
        set: settle,
        configurable: true,
        enumerable: false,
      });
    }
    vm.runInContext("globalThis.global = globalThis;", context);
    return context;
  }
}

/** Host globals the guest context gets on first access (see createContext). */
const LAZY_HOST_GLOBALS = ["Headers", "Request", "Response", "crypto"] as const;

/**
 * A `require` that resolves from each folder in turn (as a script in that folder would), so a
 * package installed with deps.add() wins over one of the same name in the project.
 */
function chainedRequire(bases: string[]): NodeRequire {
  const requires = bases.map((b) => createRequire(path.join(path.resolve(b), "__ts_code_mode__.js")));
  const first = requires[0]!;
  const resolve = ((spec: string, opts?: { paths?: string[] }) => {
    let lastError: unknown;
    for (const r of requires) {
      try {
        return r.resolve(spec, opts);
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  }) as NodeRequire["resolve"];
  resolve.paths = first.resolve.paths;
  const req = ((spec: string) => first(resolve(spec))) as NodeRequire;
  return Object.assign(req, { resolve, cache: first.cache, main: first.main, extensions: first.extensions });
}

/** `import x from "pkg"` in a snippet: resolved from the engine's import bases, like a script there. */
async function importFrom(req: NodeRequire, spec: string): Promise<unknown> {
  if (spec.startsWith("node:")) return import(spec);
  let resolved: string;
  try {
    resolved = req.resolve(spec);
  } catch {
    throw new Error(`Cannot find package '${spec}'. Install it in the project, or add it with deps.add() where the executor supports it.`);
  }
  return import(path.isAbsolute(resolved) ? pathToFileURL(resolved).href : resolved);
}

class AbandonedRun extends Error {
  constructor(
    readonly timeoutMs: number,
    readonly cancelled = false,
  ) {
    super("abandoned");
  }
}

function engineError(thrown: unknown, timeoutMs: number): ExecutionError {
  if (thrown instanceof AbandonedRun && thrown.cancelled) {
    return cancelledError("It was abandoned and its timers cleared, but asynchronous code may still be running in this process; variables are kept.");
  }
  if (thrown instanceof AbandonedRun) {
    return {
      name: "TimeoutError",
      message:
        `Execution timed out after ${timeoutMs} ms. The run was abandoned and its timers cleared, ` +
        "but asynchronous code may still be running in this process; variables are kept.",
    };
  }
  // INTERRUPTED: the host's SIGINT at the deadline (interrupt "sigint").
  const code = (thrown as { code?: unknown } | null)?.code;
  if (code === "ERR_SCRIPT_EXECUTION_TIMEOUT" || code === "ERR_SCRIPT_EXECUTION_INTERRUPTED") {
    return { name: "TimeoutError", message: `Execution timed out after ${timeoutMs} ms and was stopped; variables are kept.` };
  }
  return errorFromThrown(thrown);
}
