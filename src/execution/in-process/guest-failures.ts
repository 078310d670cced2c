/**
 * Containing the agent's failures inside the host process (InProcessExecutor).
 *
 * A rejected promise nobody awaits, or an exception thrown from a callback, ends a Node process by
 * default — here that would be the host. The agent's timers, immediates and microtasks are guarded
 * by the ReplEngine itself. What remains reaches the process-wide `unhandledRejection` and
 * `uncaughtException` events, and is told apart by realm: each vm context the executor creates is
 * registered here by its own `Object.prototype`, the root of every object made in it (its
 * promises, its errors). A rejected promise or a thrown value whose prototype chain ends in a
 * registered realm is the agent's and goes to that executor's run stderr; anything else is the
 * host's and keeps Node's default when no one else listens: the process ends.
 *
 * Not covered: a promise made by a host API the agent called without awaiting it and rejected with
 * a host error (`require("fs").promises.readFile(...)`): nothing in it belongs to the agent's realm.
 * (`fetch`, `import()` and the namespaces hand the agent promises of its own realm, so they are.)
 *
 * Realm tracking costs nothing per promise, unlike an AsyncLocalStorage scope, which would enable
 * V8's promise hooks for the whole host process. The listeners are installed once per process
 * (a guest's late failure may arrive after its executor closed) and realms are held weakly.
 */
import { types } from "node:util";
import { renderDisplay } from "../result.js";

export type FailureSink = (text: string) => void;

const realms = new WeakMap<object, FailureSink>();
let installed = false;

/** Route failures of objects made in the realm whose `Object.prototype` is `root` to `sink`. */
export function registerGuestRealm(root: object, sink: FailureSink): void {
  realms.set(root, sink);
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
}

function onRejection(reason: unknown, promise: Promise<unknown>): void {
  const sink = sinkOf(promise) ?? sinkOf(reason);
  if (sink) return sink(`Unhandled promise rejection: ${describe(reason)}\n`);
  // Not the agent's. With no other listener Node would have ended the process: do the same.
  if (process.listenerCount("unhandledRejection") === 1) {
    process.nextTick(() => {
      throw reason;
    });
  }
}

function onException(error: unknown): void {
  const sink = sinkOf(error);
  if (sink) return sink(`Uncaught exception (outside the awaited code, e.g. thrown from a timer): ${describe(error)}\n`);
  if (process.listenerCount("uncaughtException") === 1) {
    // Node's default for an uncaught exception: print it and exit with code 1.
    process.stderr.write(`${(error as { stack?: unknown } | null)?.stack ?? String(error)}\n`);
    process.exit(1);
  }
}

/** The sink of the realm `value` was made in, found at the end of its prototype chain. */
function sinkOf(value: unknown): FailureSink | undefined {
  if ((typeof value !== "object" && typeof value !== "function") || value === null || types.isProxy(value)) return undefined;
  let proto: object | null = Object.getPrototypeOf(value) as object | null;
  for (let depth = 0; proto !== null && depth < 32; depth++) {
    const sink = realms.get(proto);
    if (sink) return sink;
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return undefined;
}

/** Guest errors come from the vm context's realm, so `instanceof Error` would be false: read the fields. */
export function describe(reason: unknown): string {
  const e = reason as { name?: unknown; message?: unknown } | null;
  return typeof e === "object" && e !== null && typeof e.message === "string" ? `${String(e.name)}: ${e.message}` : renderDisplay(reason, 2_000);
}
