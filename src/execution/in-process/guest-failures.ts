/**
 * Containing the agent's failures inside the host process (InProcessExecutor).
 *
 * A rejected promise nobody awaits, or an exception thrown from a timer or callback, ends a Node
 * process by default — here that would be the host. Each in-process run executes inside an
 * AsyncLocalStorage scope whose store is the executor's report function; everything the run
 * schedules (promises, timers, immediates, process.nextTick, I/O callbacks, host-realm promises
 * such as an un-awaited `fetch`) carries that scope, and Node restores it when it emits
 * `unhandledRejection` or `uncaughtException`. So the process-wide listeners installed here can
 * tell the guest's failures, which go to the run's stderr (dropped once the executor is closed),
 * from the host's own, which keep Node's default when no one else listens: the process ends.
 *
 * The listeners are installed by the first in-process executor and stay for the life of the
 * process (one pair, however many executors): a guest's I/O callback may fail after its executor
 * closed, and removing them then would let it end the host.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { renderDisplay } from "../result.js";

export type FailureSink = (text: string) => void;

const scope = new AsyncLocalStorage<FailureSink>();
let installed = false;

/** Run `fn` (a guest script) so that failures of whatever it schedules reach `sink`. */
export function runInGuestScope<T>(sink: FailureSink, fn: () => T): T {
  return scope.run(sink, fn);
}

/** Run `fn` (host work done for the guest, e.g. a tool call) outside any guest scope: its failures are the host's. */
export function runInHostScope<T>(fn: () => T): T {
  return scope.exit(fn);
}

/** Install the process listeners (once per process). */
export function installFailureListeners(): void {
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
}

function onRejection(reason: unknown): void {
  const sink = scope.getStore();
  if (sink) return sink(`Unhandled promise rejection: ${describe(reason)}\n`);
  // Not the guest's. With no other listener Node would have ended the process: do the same.
  if (process.listenerCount("unhandledRejection") === 1) {
    process.nextTick(() => {
      throw reason;
    });
  }
}

function onException(error: unknown): void {
  const sink = scope.getStore();
  if (sink) return sink(`Uncaught exception (outside the awaited code, e.g. thrown from a timer): ${describe(error)}\n`);
  if (process.listenerCount("uncaughtException") === 1) {
    // Node's default for an uncaught exception: print it and exit with code 1.
    process.stderr.write(`${(error as { stack?: unknown } | null)?.stack ?? String(error)}\n`);
    process.exit(1);
  }
}

/** Guest errors come from the vm context's realm, so `instanceof Error` would be false: read the fields. */
export function describe(reason: unknown): string {
  const e = reason as { name?: unknown; message?: unknown } | null;
  return typeof e === "object" && e !== null && typeof e.message === "string" ? `${String(e.name)}: ${e.message}` : renderDisplay(reason, 2_000);
}
