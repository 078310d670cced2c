/**
 * The ToolAdapter behind code-defined tools. One adapter is either
 *   - one tool, called as `tools.<name>(args)` (the escape-hatch position: `direct`), or
 *   - a namespace of tools, called as `tools.<namespace>.<tool>(args)` (its `callables`).
 *
 * Discovery comes from each tool's schemas (JSON Schema → ParamSpec → TypeScript / Python
 * declarations); the registry checks arguments against those ParamSpecs first, then `call` runs the
 * schema's own validator (exact checks, defaults, transforms) and `execute`. A call is bounded by
 * the run: `execute` gets a signal that aborts when the run ends, and a call still running at the
 * run's deadline fails with TIMEOUT (the function itself cannot be stopped from outside; it should
 * honour the signal).
 */
import { randomUUID } from "node:crypto";
import { ToolError } from "../../errors.js";
import { paramsFromInputSchema, typeTextFromSchema } from "../adapters/mcp/json-schema.js";
import type { CallContext, CallableInfo, ToolAdapter, ToolInfo } from "../protocol.js";
import { callLabel } from "../validate.js";
import { prepareCodeTool, type CodeTool, type PreparedCodeTool } from "./define.js";
import { isPromiseLike, type Validation } from "./schema.js";

/** Problems quoted from a failed validation. */
const MAX_PROBLEMS = 5;
const MAX_PROBLEM_CHARS = 300;

export type CodeToolShape = { kind: "tool"; tool: CodeTool } | { kind: "namespace"; description: string; tags: readonly string[]; tools: ReadonlyMap<string, CodeTool> };

export class CodeToolAdapter implements ToolAdapter {
  private toolInfo: ToolInfo | null = null;
  private readonly callables: ReadonlyMap<string, PreparedCodeTool>;
  private readonly single: PreparedCodeTool | null;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly shape: CodeToolShape,
  ) {
    if (shape.kind === "tool") {
      this.single = prepareCodeTool(shape.tool);
      this.callables = new Map();
    } else {
      this.single = null;
      this.callables = new Map([...shape.tools].map(([n, t]) => [n, prepareCodeTool(t)]));
    }
  }

  async info(): Promise<ToolInfo> {
    return this.infoNow();
  }

  /** `info()` without the promise: code tools know their schemas without any I/O. */
  infoNow(): ToolInfo {
    if (this.toolInfo) return this.toolInfo;
    if (this.single) {
      const { tool } = this.single;
      this.toolInfo = { name: this.name, type: "code", description: tool.description, tags: [...tool.tags], callables: [], direct: callableInfo(this.name, this.single) };
    } else {
      const shape = this.shape as Extract<CodeToolShape, { kind: "namespace" }>;
      const callables = [...this.callables].map(([n, p]) => callableInfo(n, p));
      const tags = new Set([...shape.tags, ...[...this.callables.values()].flatMap((p) => p.tool.tags)]);
      this.toolInfo = { name: this.name, type: "code", description: shape.description, tags: [...tags], callables, direct: null };
    }
    return this.toolInfo;
  }

  /**
   * Checks the arguments, runs the tool, checks its result. Written without async/await: a schema
   * that checks synchronously (zod) adds no promise, and a call makes only the ones running the
   * tool needs (this is every code tool call's path; each promise costs twice under the write
   * deadline's promise hooks).
   */
  call(callable: string | null, args: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
    try {
      const label = callLabel(this.name, callable);
      if (this.closed) throw new ToolError({ tool: this.name, callable, code: "INTERNAL", message: `${label}: the tool is closed` });
      const target = callable === null ? this.single : (this.callables.get(callable) ?? null);
      if (!target) throw new ToolError({ tool: this.name, callable, code: "NOT_FOUND", message: `${label}: no such tool` });
      const at: At = { tool: this.name, callable, label };
      const input = checked(target.input.validate, args, at, "arguments", "INVALID_INPUT");
      const result = isPromiseLike(input) ? Promise.resolve(input).then((value) => runBounded(target, value, ctx, at)) : runBounded(target, input, ctx, at);
      const output = target.output?.validate;
      if (!output) return result;
      return result.then((value) => checked(output, value, at, "result (it does not match the tool's output schema)", "INTERNAL"));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

function callableInfo(name: string, p: PreparedCodeTool): CallableInfo {
  const input = p.input.jsonSchema();
  const info: CallableInfo = {
    name,
    description: p.tool.description,
    params: paramsFromInputSchema(input),
    returns: p.output ? typeTextFromSchema(p.output.jsonSchema()) : "unknown",
  };
  // A schema library that cannot say its JSON Schema still checks calls itself: pass every argument on.
  if (input === undefined) info.open = true;
  return info;
}

interface At {
  tool: string;
  callable: string | null;
  label: string;
}

type CheckCode = "INVALID_INPUT" | "INTERNAL";

/**
 * `value` as the schema leaves it (at once when the check is synchronous), or a ToolError saying
 * what is wrong. `what` and `code` are arguments, not spread into a copy of `at`: this runs on
 * every call, and no closure or object is made unless the check is asynchronous or fails.
 */
function checked(validate: PreparedCodeTool["input"]["validate"], value: unknown, at: At, what: string, code: CheckCode): unknown {
  if (!validate) return value;
  let r: ReturnType<typeof validate>;
  try {
    r = validate(value);
  } catch (e) {
    throw checkFailed(e, at, what);
  }
  if (!isPromiseLike(r)) return outcome(r, at, what, code);
  return r.then(
    (v) => outcome(v, at, what, code),
    (e: unknown) => {
      throw checkFailed(e, at, what);
    },
  );
}

function checkFailed(e: unknown, at: At, what: string): ToolError {
  return new ToolError({ tool: at.tool, callable: at.callable, code: "INTERNAL", message: `${at.label}: checking the ${what} failed: ${e instanceof Error ? e.message : String(e)}` });
}

function outcome(r: Validation, at: At, what: string, code: CheckCode): unknown {
  if (r.ok) return r.value;
  const shown = r.problems.slice(0, MAX_PROBLEMS).map((p) => (p.length > MAX_PROBLEM_CHARS ? `${p.slice(0, MAX_PROBLEM_CHARS)}…` : p));
  const more = r.problems.length > MAX_PROBLEMS ? ` (and ${r.problems.length - MAX_PROBLEMS} more)` : "";
  throw new ToolError({ tool: at.tool, callable: at.callable, code, message: `${at.label}: invalid ${what}: ${shown.join("; ")}${more}` });
}

/** The signal a call outside any run gets: nothing ends it. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * Runs `execute` with the run's signal, and gives up when the run ends (its signal aborts at the
 * deadline, on cancel, or when the run is over). Outside a run (no signal) `timeoutMs`, when given,
 * bounds the call. One promise and at most one listener per call: this is every code tool call's path.
 */
function runBounded(target: PreparedCodeTool, args: unknown, ctx: CallContext, at: At): Promise<unknown> {
  const signal = ctx.signal ?? NEVER_ABORTED;
  if (signal.aborted) return Promise.reject(abortError(at, signal));
  let returned: unknown;
  try {
    returned = target.tool.execute(args as Record<string, unknown>, { signal, toolCallId: randomUUID(), runId: ctx.runId ?? "host", executor: ctx.executor ?? "host", timeoutMs: ctx.timeoutMs });
  } catch (e) {
    return Promise.reject(executeError(e, at));
  }
  // A tool that answered synchronously has nothing left to race the run's end against.
  if (!isPromiseLike(returned)) return Promise.resolve(returned);
  const running = Promise.resolve(returned);
  if (!ctx.signal && ctx.timeoutMs === undefined) return running.catch((e: unknown) => Promise.reject(executeError(e, at)));
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      cleanup();
      reject(abortError(at, signal));
    };
    const cleanup = () => {
      if (timer) clearTimeout(timer);
      ctx.signal?.removeEventListener("abort", onAbort);
    };
    if (ctx.signal) ctx.signal.addEventListener("abort", onAbort, { once: true });
    else {
      const ms = Math.max(1, Math.min(ctx.timeoutMs!, 2_147_483_647));
      timer = setTimeout(() => {
        cleanup();
        reject(new ToolError({ tool: at.tool, callable: at.callable, code: "TIMEOUT", message: `${at.label} timed out after ${ms} ms` }));
      }, ms);
    }
    // The function may still be running when the run ends first; its late outcome is nobody's to report.
    running.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (e: unknown) => {
        cleanup();
        reject(executeError(e, at));
      },
    );
  });
}

function abortError(at: At, signal: AbortSignal): ToolError {
  const reason: unknown = signal.reason;
  const timedOut = reason instanceof Error && reason.name === "TimeoutError";
  const why = reason instanceof Error && reason.message ? `: ${reason.message}` : ": the run ended";
  return new ToolError({ tool: at.tool, callable: at.callable, code: timedOut ? "TIMEOUT" : "INTERNAL", message: `${at.label} was aborted${why}` });
}

/** What a thrown value becomes: a ToolError keeps its code; anything else is the tool's failure (INTERNAL) with its message. */
function executeError(e: unknown, at: At): ToolError {
  if (e instanceof ToolError) return e;
  const message = e instanceof Error ? `${e.name && e.name !== "Error" ? `${e.name}: ` : ""}${e.message}` : String(e);
  return new ToolError({ tool: at.tool, callable: at.callable, code: "INTERNAL", message: `${at.label} failed: ${message.length > 2_000 ? `${message.slice(0, 2_000)}…` : message}` });
}
