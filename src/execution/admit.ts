/**
 * What every executor checks before running the agent's code: that it is started and not closed,
 * that the code is a string, and that it prepares (TypeScript stripped, REPL transform). A problem
 * comes back as the run's result, never as a throw.
 */
import { CodeSyntaxError, prepareSnippet } from "./prepare.js";
import type { ExecutionResult } from "./protocol.js";
import { errorResult } from "./result.js";

export type Admission = { script: string; result?: never } | { result: ExecutionResult; script?: never };

/**
 * `prepare` turns the code into the script the guest runs; a guest in another language passes its
 * own (e.g. the code as it is). `prelude` (RunOptions.prelude, TypeScript guests only) goes before
 * the prepared script on its first line, verbatim: it is not part of the preparation's cache key.
 */
export function admitRun(code: unknown, state: { closed: boolean; started: boolean }, startedAt: number, prepare?: (code: string) => string, prelude?: string): Admission {
  if (state.closed || !state.started) {
    const why = state.closed ? "the executor is closed" : "the executor is not started; call session.start() first";
    return { result: errorResult({ name: "SessionClosedError", message: `Cannot run code: ${why}` }, startedAt) };
  }
  if (typeof code !== "string") {
    return { result: errorResult({ name: "TypeError", message: `code must be a string of TypeScript or JavaScript; got ${typeof code}` }, startedAt) };
  }
  if (prelude !== undefined && (prepare !== undefined || typeof prelude !== "string" || /[\n\r\u2028\u2029]/.test(prelude))) {
    const why = prepare !== undefined ? "this guest's code is not JavaScript" : "it must be one line of JavaScript";
    return { result: errorResult({ name: "TypeError", message: `RunOptions.prelude cannot be used here: ${why}` }, startedAt) };
  }
  try {
    const script = prepare ? prepare(code) : prepareSnippet(code).script;
    // The ";" ends the prelude's last statement whatever it is; the script stays on the same line.
    return { script: prelude === undefined ? script : `${prelude};${script}` };
  } catch (err) {
    if (err instanceof CodeSyntaxError) return { result: errorResult({ name: "SyntaxError", message: err.message }, startedAt) };
    // e.g. the parser's own recursion limit on absurdly nested code: still the agent's problem.
    const e = err instanceof Error ? err : new Error(String(err));
    return { result: errorResult({ name: e.name === "RangeError" ? "SyntaxError" : e.name, message: `The code could not be prepared: ${e.message}` }, startedAt) };
  }
}
