/**
 * What every executor checks before running the agent's code: that it is started and not closed,
 * that the code is a string, and that it prepares (TypeScript stripped, REPL transform). A problem
 * comes back as the run's result, never as a throw.
 */
import { CodeSyntaxError, prepareSnippet } from "./prepare.js";
import type { ExecutionResult } from "./protocol.js";
import { errorResult } from "./result.js";

export type Admission = { script: string; result?: never } | { result: ExecutionResult; script?: never };

/** `prepare` turns the code into the script the guest runs; a guest in another language passes its own (e.g. the code as it is). */
export function admitRun(code: unknown, state: { closed: boolean; started: boolean }, startedAt: number, prepare: (code: string) => string = (c) => prepareSnippet(c).script): Admission {
  if (state.closed || !state.started) {
    const why = state.closed ? "the executor is closed" : "the executor is not started; call session.start() first";
    return { result: errorResult({ name: "SessionClosedError", message: `Cannot run code: ${why}` }, startedAt) };
  }
  if (typeof code !== "string") {
    return { result: errorResult({ name: "TypeError", message: `code must be a string of TypeScript or JavaScript; got ${typeof code}` }, startedAt) };
  }
  try {
    return { script: prepare(code) };
  } catch (err) {
    if (err instanceof CodeSyntaxError) return { result: errorResult({ name: "SyntaxError", message: err.message }, startedAt) };
    // e.g. the parser's own recursion limit on absurdly nested code: still the agent's problem.
    const e = err instanceof Error ? err : new Error(String(err));
    return { result: errorResult({ name: e.name === "RangeError" ? "SyntaxError" : e.name, message: `The code could not be prepared: ${e.message}` }, startedAt) };
  }
}
