/**
 * SandboxInstance: one QuickJS WebAssembly module + runtime + context with the guest runtime
 * booted in it (see guest/runtime.ts). The executor owns at most one at a time and replaces it on
 * reset(), after a hard stop, or when it is no longer trustworthy.
 *
 * Everything that crosses is copied data: the guest calls the host functions below with strings,
 * numbers and ArrayBuffers only (each checked here, since agent code can tamper with the builtins
 * the guest runtime uses), and the host answers through the guest's own entry points with the
 * same. No host object or function is ever handed to the guest, and the host never reads a guest
 * object's properties (which could run a getter or a Proxy trap) — values are encoded by the
 * codec inside the guest and decoded here.
 *
 * Every call into QuickJS goes through `enter()`: a soft deadline that QuickJS's interrupt handler
 * enforces (clean, catchable by no one, the context stays usable) and the watchdog's hard stop
 * behind it (see watchdog.ts). Anything that escapes an entry — a hard stop, the host's native
 * stack running out inside WebAssembly, an Emscripten abort — "poisons" the instance: it is never
 * entered again and is dropped without calling into it.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { BoundaryError, decode, encode, type Decoded } from "./codec.js";
import { GUEST_BUNDLE } from "./guest-bundle.js";
import { parseCallBatch, type GuestLimits } from "./guest/runtime.js";
import { newSandboxModule, type SandboxModule } from "./wasm.js";
import { HardStop } from "./watchdog.js";
import { Opaque } from "./opaque.js";

export { Opaque } from "./opaque.js";

/** QuickJS's own recursion limit (its stack check runs on the WebAssembly shadow stack). */
export const MAX_STACK_BYTES = 192 * 1024;
/** After the soft deadline, how long QuickJS has to notice it before the watchdog stops it. */
export const HARD_STOP_GRACE_MS = 250;
/** Budget of an entry made outside a run (settling a reply of a call left running). */
export const IDLE_ENTRY_MS = 1_000;

export interface InstanceLimits {
  memoryMb: number;
  /** Deepest nesting of values crossing the boundary. */
  maxDepth: number;
  /** Largest value crossing the boundary, in bytes (roughly: JSON characters + binary bytes). */
  maxBytes: number;
  /** Most timers pending at once. */
  maxTimers: number;
}

export type ReportKind = "value" | "error" | "uncaught" | "unencodable";

/** A namespace call's reply, encoded on the host for the guest. */
export interface EncodedReply {
  guestId: number;
  ok: boolean;
  json: string;
  buffers: ArrayBuffer[];
}

/** What the guest does that the executor handles. Called synchronously from inside an entry. */
export interface InstanceHooks {
  /** A namespace call; `args` is an error when they could not be decoded; `bytes`: their encoded size. */
  call(instance: SandboxInstance, id: number, ns: string, op: string, args: unknown[] | Error, bytes: number): void;
  console(method: string, args: unknown[]): void;
  /** Schedule (ms >= 0) or cancel (ms < 0) a timer. */
  timer(id: number, ms: number, repeat: boolean): void;
  /** The snippet's outcome, or a timer callback that threw. `value.opaque`: not a faithful copy. */
  report(kind: ReportKind, value: Decoded): void;
}

export type PoisonReason = { kind: "hard-stop"; afterMs: number } | { kind: "native-stack" } | { kind: "crash"; message: string };

interface EntryPoints {
  settle: QuickJSHandle;
  fireTimer: QuickJSHandle;
  outcome: QuickJSHandle;
  forget: QuickJSHandle;
  takeCalls: QuickJSHandle;
}

export class SandboxInstance {
  /** Set when QuickJS's interrupt handler stopped code during the current deadline. */
  interrupted = false;
  private poison: PoisonReason | null = null;
  private disposed = false;
  private deadline = Number.POSITIVE_INFINITY;
  private entry!: EntryPoints;
  /** The promise of the snippet being run, until it settles. */
  private main: QuickJSHandle | null = null;

  private constructor(
    private readonly wasm: SandboxModule,
    private readonly runtime: QuickJSRuntime,
    private readonly context: QuickJSContext,
    private readonly limits: InstanceLimits,
    private readonly hooks: InstanceHooks,
  ) {}

  static async create(limits: InstanceLimits, hooks: InstanceHooks): Promise<SandboxInstance> {
    const wasm = await newSandboxModule(limits.memoryMb);
    const runtime = wasm.module.newRuntime();
    runtime.setMaxStackSize(MAX_STACK_BYTES);
    const context = runtime.newContext();
    const instance = new SandboxInstance(wasm, runtime, context, limits, hooks);
    runtime.setInterruptHandler(() => instance.shouldInterrupt());
    instance.boot();
    return instance;
  }

  /** Why the instance can no longer be used, or null. */
  get poisoned(): PoisonReason | null {
    return this.poison;
  }

  get usable(): boolean {
    return !this.poison && !this.disposed;
  }

  /** True when the sandbox's memory has grown to (nearly) its limit, or its last growth was refused. */
  get memoryExhausted(): boolean {
    return this.wasm.growRefused() || this.wasm.memory.buffer.byteLength >= this.wasm.maxBytes - 1_048_576;
  }

  /** The soft deadline (performance.now() time) that the interrupt handler enforces. */
  setDeadline(at: number): void {
    this.deadline = at;
    this.interrupted = false;
  }

  /** A short deadline for the host's own entries outside a run (settling a late reply, cleanup). */
  setIdleDeadline(): void {
    this.setDeadline(performance.now() + IDLE_ENTRY_MS);
  }

  /**
   * Evaluate a prepared snippet and, if its promise is still pending, do in the same entry what the
   * first `step()` would: deliver `replies`, run up to `maxJobs` promise jobs (so a snippet whose awaits
   * settle at once needs one entry, not two).
   * Its outcome arrives through hooks.report: from this call when it settled, else from a later
   * `step()`. Returns whether the replies were delivered (else they are kept for later).
   */
  evaluate(script: string, replies: readonly EncodedReply[] = [], maxJobs = 0): boolean {
    this.releaseMain();
    let delivered = false;
    this.enter(() => {
      const result = this.context.evalCode(script, "snippet.ts", { type: "global" });
      if (result.error) {
        try {
          this.reportOutcome(false, result.error);
        } finally {
          result.error.dispose();
        }
        return;
      }
      this.main = result.value;
      this.reportIfSettled();
      // Settled at once (`1+1`): replies wait, as they did for a run that needed no step.
      if (!this.main) return;
      delivered = true;
      for (const reply of replies) this.deliver(reply);
      if (maxJobs > 0) this.runJobsInside(maxJobs);
      this.reportIfSettled();
    });
    return delivered;
  }

  /**
   * One entry into the sandbox doing what is ready, in the order Node would: deliver replies of
   * namespace calls, run promise jobs, fire `timer` if no job is left, run the jobs it queued, and
   * report the snippet's outcome if it settled. Returns whether the timer was fired.
   */
  step(replies: readonly EncodedReply[], timer: number | undefined, maxJobs: number): boolean {
    let fired = false;
    this.enter(() => {
      for (const reply of replies) this.deliver(reply);
      if (maxJobs > 0) this.runJobsInside(maxJobs);
      if (timer !== undefined && !this.runtime.hasPendingJob()) {
        fired = true;
        const idHandle = this.context.newNumber(timer);
        try {
          this.callEntry(this.entry.fireTimer, [idHandle]);
        } finally {
          idHandle.dispose();
        }
        if (maxJobs > 0) this.runJobsInside(maxJobs);
      }
      this.reportIfSettled();
    });
    return fired;
  }

  /** Run up to `max` pending promise jobs (in their own entry). */
  runJobs(max: number): void {
    this.enter(() => this.runJobsInside(max));
  }

  /** A reply encoded on the host, ready to enter the sandbox (see `step`). */
  encodeReply(guestId: number, ok: boolean, value: unknown): EncodedReply {
    try {
      return { guestId, ok, ...encode(value, { mode: "data", maxDepth: this.limits.maxDepth, maxBytes: this.limits.maxBytes }) };
    } catch (err) {
      const error = { name: "DataCloneError", message: `the result could not be copied into the sandbox: ${(err as Error).message}` };
      return { guestId, ok: false, ...encode(error, { mode: "data", maxDepth: 4, maxBytes: 1_000_000 }) };
    }
  }

  private runJobsInside(max: number): void {
    const result = this.runtime.executePendingJobs(max);
    // A job that threw (the interrupt, typically): its promise chain is rejected or dropped.
    if (result.error) result.error.dispose();
  }

  private deliver(reply: EncodedReply): void {
    const ctx = this.context;
    const args = [ctx.newNumber(reply.guestId), ctx.newString(reply.json), ...reply.buffers.map((b) => ctx.newArrayBuffer(b))];
    try {
      this.callEntry(this.entry.settle, [args[0] as QuickJSHandle, reply.ok ? ctx.true : ctx.false, ...args.slice(1)]);
    } finally {
      for (const h of args) if (h.alive) h.dispose();
    }
  }

  /**
   * Report the snippet's outcome if its promise has settled. The state is read by the host (no
   * `then` callback is queued in the guest), so after a timeout any job still queued belongs to the
   * agent's code — which is how the executor tells whether the stopped code left work behind.
   * Runs inside an entry.
   */
  private reportIfSettled(): void {
    const main = this.main;
    if (!main) return;
    const state = this.context.getPromiseState(main);
    if (state.type === "pending") return;
    this.main = null;
    const settled = state.type === "fulfilled" ? state.value : state.error;
    try {
      this.reportOutcome(state.type === "fulfilled", settled);
    } finally {
      if (settled !== main && settled.alive) settled.dispose();
      if (main.alive) main.dispose();
    }
  }

  hasPendingJobs(): boolean {
    if (!this.usable) return false;
    try {
      return this.runtime.hasPendingJob();
    } catch (err) {
      this.poisonWith(err);
      return false;
    }
  }

  /** Drop the guest's timers and, with `calls`, its pending namespace calls (see GuestEntryPoints.forget). */
  forget(calls: boolean): void {
    this.enter(() => this.callEntry(this.entry.forget, [calls ? this.context.true : this.context.false]));
  }

  /** Forget the snippet's promise (its run ended without it settling). */
  releaseMain(): void {
    const main = this.main;
    this.main = null;
    if (main?.alive && !this.poison) main.dispose();
  }

  /**
   * Release the module: dropped, not torn down. It is this instance's alone (wasm.ts), so its memory
   * goes with it at once, and nothing is called into it. QuickJS's own teardown (JS_FreeRuntime)
   * would only free the heap object by object, and after an interrupt landed inside a promise job
   * it finds objects QuickJS leaked on that path and aborts on its leak assertion
   * (`list_empty(&rt->gc_obj_list)`): harmless for a module thrown away, but work for nothing.
   */
  dispose(): void {
    this.disposed = true;
  }

  // ---- internals ------------------------------------------------------------------------------

  private shouldInterrupt(): boolean {
    if (performance.now() <= this.deadline) return false;
    this.interrupted = true;
    return true;
  }

  /**
   * One call into QuickJS under the deadline, ending with taking the namespace calls the guest
   * made during it (they wait in the guest: see HostFunctions.calls). Returns undefined (and
   * poisons the instance) when the call did not end normally.
   */
  private enter<T>(fn: () => T): T | undefined {
    if (!this.usable) return undefined;
    if (!Number.isFinite(this.deadline)) this.deadline = performance.now() + IDLE_ENTRY_MS;
    const hardMs = Math.max(0, this.deadline - performance.now()) + HARD_STOP_GRACE_MS;
    try {
      return this.wasm.watchdog.run(() => {
        const result = fn();
        this.takeCalls();
        return result;
      }, hardMs);
    } catch (err) {
      this.poisonWith(err);
      return undefined;
    }
  }

  private poisonWith(err: unknown): void {
    if (this.poison) return;
    if (err instanceof HardStop) this.poison = { kind: "hard-stop", afterMs: err.afterMs };
    else if (err instanceof RangeError && /call stack/i.test(err.message)) this.poison = { kind: "native-stack" };
    else this.poison = { kind: "crash", message: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }

  /**
   * The calls the guest made since the last take, to the executor. One call into the guest per
   * entry instead of a host function call per namespace call: quickjs-emscripten's host function
   * wrapper costs ~15 µs a call (generators and lifetimes per call), a plain call in ~1 µs.
   */
  private takeCalls(): void {
    const batch = this.callEntryFor(this.entry.takeCalls, [], (h) => (this.context.typeof(h) === "string" ? this.context.getString(h) : undefined));
    if (batch !== undefined) this.receiveBatch(batch);
  }

  /** Calls a guest entry point; a guest exception there is a bug of ours, so it poisons. */
  private callEntry(fn: QuickJSHandle, args: QuickJSHandle[]): void {
    this.callEntryFor(fn, args, () => undefined);
  }

  /** callEntry, and `read` the entry's return value (a handle valid during the call) unless it threw. */
  private callEntryFor<T>(fn: QuickJSHandle, args: QuickJSHandle[], read: (value: QuickJSHandle) => T): T | undefined {
    const result = this.context.callFunction(fn, this.context.undefined, ...args);
    if (result.error) {
      const text = this.describeGuestError(result.error);
      result.error.dispose();
      // The interrupt (a deadline) can land inside an entry point; that is not a fault.
      if (this.interrupted) return undefined;
      throw new Error(`sandbox guest runtime failed: ${text}`);
    }
    try {
      return read(result.value);
    } finally {
      result.value.dispose();
    }
  }

  /**
   * The snippet's outcome: the guest encodes it and returns "kind\n" + json (one host call fewer
   * than reporting it through host.report, which it still does for a value with binary parts).
   */
  private reportOutcome(fulfilled: boolean, value: QuickJSHandle): void {
    const text = this.callEntryFor(this.entry.outcome, [fulfilled ? this.context.true : this.context.false, value], (h) =>
      this.context.typeof(h) === "string" ? this.context.getString(h) : undefined,
    );
    if (text === undefined) return;
    // Anything thrown here escapes the entry, which poisons the instance (as a bad host.report did).
    const cut = text.indexOf("\n");
    if (cut < 0) throw new TypeError("sandbox: malformed outcome");
    this.receiveReport(text.slice(0, cut), text.slice(cut + 1), []);
  }

  private describeGuestError(handle: QuickJSHandle): string {
    try {
      // Only strings are read: dump() or property reads could run guest code.
      return this.context.typeof(handle) === "string" ? this.context.getString(handle) : "an exception";
    } catch {
      return "an exception";
    }
  }

  private boot(): void {
    const ctx = this.context;
    const evaluated = ctx.evalCode(GUEST_BUNDLE, "ts-code-mode-sandbox.js", { type: "global" });
    if (evaluated.error) {
      evaluated.error.dispose();
      throw new Error("the sandbox guest runtime did not evaluate");
    }
    const boot = evaluated.value;
    const host = ctx.newObject();
    const fns = {
      call: ctx.newFunction("call", (...args) => this.hostCall(args)),
      console: ctx.newFunction("console", (...args) => this.hostConsole(args)),
      timer: ctx.newFunction("timer", (...args) => this.hostTimer(args)),
      report: ctx.newFunction("report", (...args) => this.hostReport(args)),
      calls: ctx.newFunction("calls", (...args) => this.hostCalls(args)),
      compile: ctx.newFunction("compile", (...args) => this.hostCompile(args)),
    };
    const guestLimits: GuestLimits = { maxDepth: this.limits.maxDepth, maxBytes: this.limits.maxBytes, maxTimers: this.limits.maxTimers };
    const limitsHandle = ctx.newString(JSON.stringify(guestLimits));
    try {
      for (const [name, fn] of Object.entries(fns)) ctx.setProp(host, name, fn);
      const booted = ctx.callFunction(boot, ctx.undefined, host, limitsHandle);
      if (booted.error) {
        booted.error.dispose();
        throw new Error("the sandbox guest runtime did not boot");
      }
      // No agent code has run yet, so reading our own freshly made object runs nothing else.
      const entry = booted.value;
      this.entry = {
        settle: ctx.getProp(entry, "settle"),
        fireTimer: ctx.getProp(entry, "fireTimer"),
        outcome: ctx.getProp(entry, "outcome"),
        forget: ctx.getProp(entry, "forget"),
        takeCalls: ctx.getProp(entry, "takeCalls"),
      };
      entry.dispose();
    } finally {
      for (const fn of Object.values(fns)) fn.dispose();
      host.dispose();
      limitsHandle.dispose();
      boot.dispose();
    }
  }

  // ---- host functions (guest → host); every argument is checked --------------------------------

  private str(h: QuickJSHandle | undefined): string {
    if (!h || this.context.typeof(h) !== "string") throw new TypeError("sandbox: expected a string");
    return this.context.getString(h);
  }

  private num(h: QuickJSHandle | undefined): number {
    if (!h || this.context.typeof(h) !== "number") throw new TypeError("sandbox: expected a number");
    return this.context.getNumber(h);
  }

  private bytes(handles: QuickJSHandle[]): ArrayBuffer[] {
    return handles.map((h) => {
      if (this.context.typeof(h) !== "object") throw new TypeError("sandbox: expected an ArrayBuffer");
      const lifetime = this.context.getArrayBuffer(h);
      try {
        return lifetime.value.slice().buffer as ArrayBuffer;
      } finally {
        lifetime.dispose();
      }
    });
  }

  /** Decodes what the guest sent; its size is checked here too (the guest side can be tampered with). */
  private decodeFromGuest(json: string, buffers: ArrayBuffer[], display: boolean): Decoded {
    const size = buffers.reduce((n, b) => n + b.byteLength, json.length);
    if (size > this.limits.maxBytes) throw new BoundaryError(`the value is larger than ${Math.round(this.limits.maxBytes / 1_048_576)} MB, the most that can cross the sandbox boundary`);
    return decode(json, buffers, {
      strictKeys: true,
      maxDepth: this.limits.maxDepth + 1,
      ...(display ? { opaque: (text: string) => new Opaque(text) } : {}),
    });
  }

  /** Turns a host-side exception into a guest exception; a stack overflow here poisons the instance. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (err instanceof RangeError && /call stack/i.test(err.message)) this.poisonWith(err);
      throw err;
    }
  }

  private hostCall(args: QuickJSHandle[]): void {
    this.guard(() => this.receiveCall(this.num(args[0]), this.str(args[1]), this.str(args[2]), this.str(args[3]), this.bytes(args.slice(4))));
  }

  /** The guest handing over its waiting calls early (see HostFunctions.calls). */
  private hostCalls(args: QuickJSHandle[]): void {
    this.guard(() => this.receiveBatch(this.str(args[0])));
  }

  private receiveBatch(batch: string): void {
    parseCallBatch(batch, (id, ns, op, json) => this.receiveCall(id, ns, op, json, []));
  }

  /** A namespace call from the guest: its arguments decoded (or the reason they could not be) for hooks.call. */
  private receiveCall(id: number, ns: string, op: string, json: string, buffers: ArrayBuffer[]): void {
    const size = buffers.reduce((n, b) => n + b.byteLength, json.length);
    let decoded: unknown[] | Error;
    try {
      const value = this.decodeFromGuest(json, buffers, false).value;
      decoded = Array.isArray(value) ? value : new BoundaryError("the arguments must be an array");
    } catch (err) {
      decoded = err instanceof Error ? err : new Error(String(err));
    }
    this.hooks.call(this, id, ns, op, decoded, size);
  }

  private hostConsole(args: QuickJSHandle[]): void {
    this.guard(() => {
      const method = this.str(args[0]);
      let value: unknown;
      try {
        value = this.decodeFromGuest(this.str(args[1]), this.bytes(args.slice(2)), true).value;
      } catch (err) {
        value = [`[console.${method}: arguments could not be shown: ${(err as Error).message}]`];
      }
      this.hooks.console(method, Array.isArray(value) ? value : [value]);
    });
  }

  private hostTimer(args: QuickJSHandle[]): void {
    this.guard(() => {
      const id = this.num(args[0]);
      const ms = this.num(args[1]);
      const repeat = args[2] !== undefined && this.context.sameValue(args[2], this.context.true);
      this.hooks.timer(id, ms, repeat);
    });
  }

  private hostReport(args: QuickJSHandle[]): void {
    this.guard(() => this.receiveReport(this.str(args[0]), this.str(args[1]), this.bytes(args.slice(2))));
  }

  /** A report from the guest (host.report's arguments, or an outcome returned by the guest). */
  private receiveReport(kind: string, json: string, buffers: ArrayBuffer[]): void {
    if (kind === "unencodable") {
      this.hooks.report("unencodable", { value: json, opaque: true });
      return;
    }
    if (kind !== "value" && kind !== "error" && kind !== "uncaught") throw new TypeError("sandbox: unknown report");
    let decoded: Decoded;
    try {
      decoded = this.decodeFromGuest(json, buffers, true);
    } catch (err) {
      // Data the host refuses (a __proto__ key, say) is reported, not trusted.
      if (kind === "value") {
        this.hooks.report("unencodable", { value: (err as Error).message, opaque: true });
        return;
      }
      decoded = { value: err, opaque: false };
    }
    this.hooks.report(kind, decoded);
  }

  private hostCompile(args: QuickJSHandle[]): QuickJSHandle | { error: QuickJSHandle } {
    const name = this.str(args[0]);
    const body = this.str(args[1]);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new TypeError("sandbox: bad workflow name");
    const result = this.context.evalCode(`(function (exports, require, module, tools, workflows, artifacts, deps) {${body}\n})`, `workflows/${name}.ts`, {
      type: "global",
    });
    if (result.error) return { error: result.error };
    return result.value;
  }
}
