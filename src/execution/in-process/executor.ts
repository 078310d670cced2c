/**
 * InProcessExecutor: the agent's code runs in a node:vm context of the host process. Fastest, and
 * for trusted code only — node:vm is not a security boundary, and the guest gets Node's globals
 * (process, require, fetch, timers).
 *
 * What a timeout can stop here: vm's `timeout` interrupts synchronous code that runs before the
 * snippet's first `await`. Code that keeps running after an await (an async loop, a sync loop in a
 * continuation or timer) cannot be interrupted inside the host process; on timeout the run returns
 * a TimeoutError, the guest's timers are cleared, and the rest is abandoned. `capabilities()` says
 * so. Use SubprocessExecutor when code must really be stopped.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import vm from "node:vm";
import { ValidationError } from "../../errors.js";
import type { StorageBackend } from "../../storage/protocol.js";
import type { ToolRegistry } from "../../tools/registry.js";
import { createNamespaces, type GuestNamespaces } from "../guest/namespaces.js";
import { HostServices } from "../host.js";
import { createGuestConsole, OutputBuffer, type RunOutput } from "../output.js";
import { CodeSyntaxError, IMPORT_FN, prepareModule, prepareSnippet } from "../prepare.js";
import type { CapabilityReport, ExecutionResult, Executor, RunOptions } from "../protocol.js";
import { cloneValue, errorFromThrown, errorResult, renderDisplay } from "../result.js";
import { fromWireError, toWireError } from "../wire-error.js";
import { parseExecutorOptions, type ExecutorOptions } from "../options.js";
import { SerialQueue } from "../serial-queue.js";

export interface InProcessExecutorOptions extends ExecutorOptions {
  /** A ready registry (e.g. with in-process test adapters); wins over `toolsPath`. */
  tools?: ToolRegistry;
}

type Timer = ReturnType<typeof setTimeout>;

export class InProcessExecutor implements Executor {
  readonly kind = "in-process";
  private readonly options: ReturnType<typeof parseExecutorOptions>;
  private readonly registry: ToolRegistry | undefined;
  private hostServices: HostServices | null = null;
  private context: vm.Context | null = null;
  private output: RunOutput | null = null;
  private readonly timers = new Set<Timer>();
  private readonly queue = new SerialQueue();
  private readonly scripts = new Map<string, vm.Script>();
  private closed = false;

  constructor(options: InProcessExecutorOptions = {}) {
    const { tools, ...rest } = options;
    this.options = parseExecutorOptions(rest, "InProcessExecutor");
    this.registry = tools;
  }

  get host(): HostServices | null {
    return this.hostServices;
  }

  capabilities(): CapabilityReport {
    return {
      capabilities: ["timeout", "reset"],
      notes: [
        "timeout: stops synchronous code that runs before the snippet's first await; after that, a timed-out run returns TimeoutError and its timers are cleared, but code still running (an async loop, a sync loop after an await) cannot be interrupted and blocks the host process.",
        "No isolation: the code runs inside the host process with Node's full authority (files, network, environment). Use it for trusted code only.",
        "No memory limit: an allocation loop can exhaust the host process.",
        "deps: packages already installed in the project can be imported; nothing is installed at run time.",
      ],
    };
  }

  async start(storage: StorageBackend): Promise<void> {
    if (this.closed) throw new ValidationError("InProcessExecutor is closed; create a new one");
    if (this.hostServices) return;
    const hostOptions = this.registry ? { storage, tools: this.registry } : { storage, toolsPath: this.options.toolsPath };
    this.hostServices = await HostServices.create(hostOptions);
    this.context = this.createContext(this.hostServices);
  }

  run(code: string, options: RunOptions = {}): Promise<ExecutionResult> {
    return this.queue.run(() => this.runNow(code, options));
  }

  private async runNow(code: string, options: RunOptions): Promise<ExecutionResult> {
    const startedAt = performance.now();
    const context = this.context;
    if (this.closed || !context) {
      const why = this.closed ? "the executor is closed" : "the executor is not started; call session.start() first";
      return errorResult({ name: "SessionClosedError", message: `Cannot run code: ${why}` }, startedAt);
    }
    if (typeof code !== "string") return errorResult({ name: "TypeError", message: `code must be a string; got ${typeof code}` }, startedAt);
    const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs;
    const output: RunOutput = { stdout: new OutputBuffer(), stderr: new OutputBuffer() };
    this.output = output;
    const finish = (fields: Pick<ExecutionResult, "ok" | "value" | "display" | "error">): ExecutionResult => ({
      ...fields,
      stdout: output.stdout.text(),
      stderr: output.stderr.text(),
      durationMs: performance.now() - startedAt,
    });
    let timer: Timer | undefined;
    try {
      const script = this.compile(code);
      const pending = script.runInContext(context, { timeout: timeoutMs, displayErrors: false }) as Promise<unknown>;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new AbandonedError(timeoutMs)), Math.max(1, timeoutMs - (performance.now() - startedAt)));
      });
      const value = await Promise.race([pending, timedOut]);
      return finish({ ok: true, value: cloneValue(value), display: renderDisplay(value), error: null });
    } catch (thrown) {
      if (thrown instanceof AbandonedError) this.clearTimers();
      return finish({ ok: false, value: undefined, display: "", error: toExecutionError(thrown, timeoutMs) });
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  /** Prepared and compiled scripts are cached by source text: agents repeat snippets often. */
  private compile(code: string): vm.Script {
    let script = this.scripts.get(code);
    if (!script) {
      script = new vm.Script(prepareSnippet(code).script, { filename: "snippet.ts" });
      if (this.scripts.size >= 500) this.scripts.delete(this.scripts.keys().next().value as string);
      this.scripts.set(code, script);
    }
    return script;
  }

  async reset(): Promise<void> {
    await this.queue.run(async () => {
      if (this.closed || !this.hostServices) return;
      this.clearTimers();
      this.context = this.createContext(this.hostServices);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clearTimers();
    this.context = null;
    const host = this.hostServices;
    this.hostServices = null;
    await host?.close();
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** A fresh context: Node's globals, the guest console, the four namespaces, the import hook. */
  private createContext(host: HostServices): vm.Context {
    const cwd = process.cwd();
    const requireFromCwd = createRequire(path.join(cwd, "__ts_code_mode__.js"));
    const context = vm.createContext({});
    const ErrorCtor = vm.runInContext("Error", context) as ErrorConstructor;
    const namespaces: GuestNamespaces = createNamespaces({
      ErrorCtor,
      call: async (ns, op, args) => {
        try {
          // Arguments are copied into the host realm, as they would be across a process boundary:
          // the host's plain-object and JSON checks then see host objects, and the guest cannot
          // mutate what the host is working on.
          return await host.dispatch(ns, op, structuredClone(args));
        } catch (err) {
          throw fromWireError(toWireError(err), ErrorCtor);
        }
      },
      compileWorkflow: (name, source, ns) => {
        const body = prepareModule(source, `${name}.ts`);
        const factory = vm.runInContext(`(function (exports, require, module, tools, workflows, artifacts, deps) {${body}\n})`, context, {
          filename: `workflows/${name}.ts`,
        }) as (...args: unknown[]) => void;
        const module = { exports: {} as Record<string, unknown> };
        factory(module.exports, requireFromCwd, module, ns.tools, ns.workflows, ns.artifacts, ns.deps);
        return module.exports;
      },
    });
    const track = <A extends unknown[]>(schedule: (fn: (...a: A) => void, ms?: number, ...a: A) => Timer) =>
      (fn: (...a: A) => void, ms?: number, ...rest: A): Timer => {
        const handle = schedule((...a: A) => {
          if (schedule === (setTimeout as unknown)) this.timers.delete(handle);
          fn(...a);
        }, ms, ...rest);
        this.timers.add(handle);
        return handle;
      };
    const globals: Record<string, unknown> = {
      console: createGuestConsole(() => this.output),
      setTimeout: track(setTimeout as never),
      setInterval: track(setInterval as never),
      clearTimeout: (t: Timer) => (clearTimeout(t), this.timers.delete(t)),
      clearInterval: (t: Timer) => (clearInterval(t), this.timers.delete(t)),
      setImmediate,
      clearImmediate,
      queueMicrotask,
      structuredClone,
      URL,
      URLSearchParams,
      TextEncoder,
      TextDecoder,
      Buffer,
      fetch,
      Headers,
      Request,
      Response,
      AbortController,
      AbortSignal,
      atob,
      btoa,
      performance,
      crypto: globalThis.crypto,
      process,
      require: requireFromCwd,
      ...namespaces,
      [IMPORT_FN]: (spec: string) => importFrom(requireFromCwd, spec),
    };
    for (const [k, v] of Object.entries(globals)) {
      Object.defineProperty(context, k, { value: v, writable: true, configurable: true, enumerable: false });
    }
    vm.runInContext("globalThis.global = globalThis;", context);
    return context;
  }
}

/** `import x from "pkg"` in a snippet: resolved from the working directory, like a script there. */
async function importFrom(req: NodeRequire, spec: string): Promise<unknown> {
  if (spec.startsWith("node:")) return import(spec);
  let resolved: string;
  try {
    resolved = req.resolve(spec);
  } catch {
    throw new Error(`Cannot find package '${spec}' from ${process.cwd()}. Install it in the project, or use an executor that supports deps.add().`);
  }
  return import(path.isAbsolute(resolved) ? pathToFileURL(resolved).href : resolved);
}

class AbandonedError extends Error {
  constructor(readonly timeoutMs: number) {
    super("abandoned");
  }
}

function toExecutionError(thrown: unknown, timeoutMs: number) {
  if (thrown instanceof AbandonedError) {
    return {
      name: "TimeoutError",
      message:
        `Execution timed out after ${timeoutMs} ms. The in-process executor abandoned the run and cleared its timers, ` +
        "but asynchronous code may still be running in the host; variables are kept.",
    };
  }
  if (thrown instanceof CodeSyntaxError) return { name: "SyntaxError", message: thrown.message };
  const code = (thrown as { code?: unknown } | null)?.code;
  if (code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
    return { name: "TimeoutError", message: `Execution timed out after ${timeoutMs} ms and was stopped; variables are kept.` };
  }
  return errorFromThrown(thrown);
}
