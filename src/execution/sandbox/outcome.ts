/**
 * How the end of a sandbox run becomes an ExecutionResult's value, display and error — the same
 * shapes the other executors produce (see ../result.ts), plus the sandbox's own failure modes.
 */
import type { ExecutionError } from "../protocol.js";
import { errorFromThrown, renderDisplay } from "../result.js";
import type { Decoded } from "./codec.js";
import { cutNote, pruneForDisplay } from "./display.js";
import type { PoisonReason } from "./instance.js";

const LOST = "The sandbox was restarted, so variables from earlier runs were lost.";

export function valueFields(decoded: Decoded): { value: unknown; display: string } {
  // A value with a function (or another uncopyable part) inside is not a faithful copy: like
  // structuredClone in the other executors, the result has no value, only its display.
  return { value: decoded.opaque ? undefined : decoded.value, display: boundedDisplay(decoded.value) };
}

/** renderDisplay of a decoded value, in bounded time and memory (see display.ts). */
export function boundedDisplay(value: unknown): string {
  const pruned = pruneForDisplay(value);
  const text = renderDisplay(pruned.value);
  return pruned.cut ? `${text}\n${cutNote(pruned.cut)}` : text;
}

export function unencodableFields(reason: string): { value: undefined; display: string } {
  return { value: undefined, display: `[the value could not be copied out of the sandbox: ${reason}]` };
}

/** A value the agent's code threw (decoded), with QuickJS's internal errors given their usual names. */
export function thrownError(thrown: unknown, memoryMb: number): ExecutionError {
  // A thrown non-error is rendered: bounded like any value (an Error is read, not walked).
  const e = errorFromThrown(thrown instanceof Error ? thrown : pruneForDisplay(thrown).value);
  if (e.name === "InternalError" && /stack overflow/i.test(e.message)) {
    return { ...e, name: "RangeError", message: "Maximum call stack size exceeded" };
  }
  if (e.name === "InternalError" && /out of memory/i.test(e.message)) return memoryError(memoryMb, false);
  return e;
}

export function memoryError(memoryMb: number, restarted: boolean): ExecutionError {
  return {
    name: "MemoryLimitError",
    message: `The code ran out of memory: it exceeded the sandbox's memory limit of ${memoryMb} MB (memoryMb). ${restarted ? LOST : "A fresh sandbox will run the next code; variables from earlier runs were lost."}`,
  };
}

export function timeoutError(timeoutMs: number, how: "kept" | "lost" | "waiting"): ExecutionError {
  const base = `Execution timed out after ${timeoutMs} ms`;
  if (how === "waiting") return { name: "TimeoutError", message: `${base} while waiting (on a tool call, a timer or a promise); its pending calls were aborted; variables are kept.` };
  if (how === "kept") return { name: "TimeoutError", message: `${base} and was stopped; variables are kept.` };
  return { name: "TimeoutError", message: `${base}. The code was stopped by restarting the sandbox, so variables from earlier runs were lost.` };
}

/** An instance that had to be dropped in the middle of a run. */
export function poisonError(reason: PoisonReason, timeoutMs: number, memoryMb: number, memoryExhausted: boolean): ExecutionError {
  if (memoryExhausted) return memoryError(memoryMb, true);
  switch (reason.kind) {
    case "hard-stop":
      return timeoutError(timeoutMs, "lost");
    case "native-stack":
      return {
        name: "RangeError",
        message: `Maximum call stack size exceeded (a deeply nested value or expression exhausted the sandbox's native stack). ${LOST}`,
      };
    case "crash":
      return { name: "SandboxCrashError", message: `The sandbox failed (${reason.message}). ${LOST}` };
  }
}

export function uncaughtError(thrown: unknown, memoryMb: number): ExecutionError {
  const e = thrownError(thrown, memoryMb);
  return { ...e, message: `Uncaught exception in a timer callback: ${e.message}` };
}

