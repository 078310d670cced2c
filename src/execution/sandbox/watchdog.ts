/**
 * The hard stop behind the sandbox's deadline.
 *
 * QuickJS asks its interrupt handler for permission to go on only every 10,000 function calls or
 * loop iterations. That stops ordinary runaway loops promptly, but a loop whose every iteration is
 * a long native operation (`new Array(1e5).fill(1)`, a huge `join`, a regex on a long string) can
 * run for many seconds between two checks. So every entry into the sandbox also runs under a
 * node:vm `timeout`: Node's watchdog thread calls V8's TerminateExecution on this thread when the
 * time is up, which stops WebAssembly mid-instruction. Nothing inside the sandbox can catch that.
 *
 * A terminated entry leaves the QuickJS module in an unknown state (it may have been inside malloc
 * or the garbage collector), so the caller must throw that module away and never call into it
 * again; each sandbox instance owns its module (see wasm.ts), so nothing else is affected.
 */
import vm from "node:vm";

/** Thrown when the watchdog stopped an entry. */
export class HardStop extends Error {
  constructor(readonly afterMs: number) {
    super(`stopped by the watchdog after ${afterMs} ms`);
    this.name = "HardStop";
  }
}

interface Gate {
  enter: (() => unknown) | null;
}

// One tiny context and script for the process: the script only calls the function it is handed,
// so the timeout covers exactly that call.
const gate = vm.createContext({ enter: null } satisfies Gate) as Gate;
const script = new vm.Script("enter()", { filename: "ts-code-mode-sandbox-watchdog" });

/**
 * Run `fn` synchronously; if it is still running after `ms`, stop it and throw HardStop.
 * Entries nest (a host function called from the sandbox may enter it again): the outer deadline
 * stays in force.
 */
export function withWatchdog<T>(fn: () => T, ms: number): T {
  if (gate.enter !== null) return fn();
  const timeout = Math.max(1, Math.ceil(ms));
  let result!: T;
  gate.enter = () => {
    result = fn();
  };
  try {
    script.runInContext(gate as vm.Context, { timeout, displayErrors: false });
    return result;
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") throw new HardStop(timeout);
    throw err;
  } finally {
    gate.enter = null;
  }
}
