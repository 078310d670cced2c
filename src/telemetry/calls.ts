/**
 * Spans and metrics of namespace calls, at the one place every executor's calls pass:
 * HostServices.dispatchHeld (directly in process, through the RPC provider otherwise) — the same
 * point the run ledger records. A tool call is a gen_ai `execute_tool` span; workflow invocations,
 * writes (artifacts, deps, workflows, skills) and skill runs are `code_mode.<ns>.<op>` spans; reads
 * get no span (they would drown a trace) but their failures still count in `code_mode.errors`.
 *
 * What only the tool registry knows — the tool's type, how many attempts the middleware made — it
 * reports with `noteToolType` / `noteToolAttempt` into the call's record, found through the active
 * context; approval waits are seen where the approval middleware pauses the run's deadline.
 */
import type { Attributes, Context } from "@opentelemetry/api";
import { liveApi, type OtelApi } from "./api.js";
import { contentAttribute } from "./content.js";
import { recordCallError, recordToolCall } from "./metrics.js";
import { ATTR } from "./names.js";
import { inSpan, type TraceContext } from "./spans.js";

/** What the dispatcher's call context carries that telemetry reads or wraps. */
export interface TracedCallContext {
  trace?: TraceContext | undefined;
  runId?: string | undefined;
  holdDeadline?: (() => () => void) | undefined;
}

/** Operations with a span of their own; the key of workflows.load is an invocation (the guest runs what it loads). */
const SPANNED: Record<string, Record<string, string>> = {
  workflows: { load: "code_mode.workflows.invoke", create: "code_mode.workflows.create", delete: "code_mode.workflows.delete" },
  artifacts: { save: "code_mode.artifacts.save", delete: "code_mode.artifacts.delete" },
  deps: { add: "code_mode.deps.add", remove: "code_mode.deps.remove", sync: "code_mode.deps.sync" },
  skills: { run: "code_mode.skills.run", create: "code_mode.skills.create", delete: "code_mode.skills.delete" },
};

interface ToolCallRecord {
  type: string | undefined;
  attempts: number;
  approvalWaits: number;
  approvalWaitMs: number;
}

let recordKey: symbol | undefined;
const keyOf = (api: OtelApi): symbol => (recordKey ??= api.createContextKey("code_mode.tool_call"));

function currentRecord(): ToolCallRecord | undefined {
  const api = liveApi();
  return api ? (api.context.active().getValue(keyOf(api)) as ToolCallRecord | undefined) : undefined;
}

/** The tool registry resolved the called tool's type (cli, mcp, http, ...). */
export function noteToolType(type: string): void {
  const r = currentRecord();
  if (r) r.type = type;
}

/** The middleware chain reached the adapter once more (a first attempt, or a retry). */
export function noteToolAttempt(): void {
  const r = currentRecord();
  if (r) r.attempts++;
}

/**
 * Runs one namespace call (`run`) under its span and metrics. `ctx` is what the call will see:
 * tool calls get a `holdDeadline` that also counts approval waits.
 */
export function traceNamespaceCall<C extends TracedCallContext, T>(ns: string, op: string, args: readonly unknown[], ctx: C, executor: string, run: (ctx: C) => Promise<T>): Promise<T> {
  const api = liveApi();
  if (!api) return run(ctx);
  if (ns === "tools" && (op === "call" || op === "session")) return traceToolCall(api, op, args, ctx, executor, run);
  const name = SPANNED[ns]?.[op];
  const counted = (p: Promise<T>) =>
    p.catch((err: unknown) => {
      recordCallError(ns, errorName(err));
      throw err;
    });
  if (name === undefined) return counted(run(ctx));
  const attributes: Attributes = { [ATTR.namespace]: ns, [ATTR.operation]: op, [ATTR.executor]: executor };
  if (typeof args[0] === "string") attributes[ATTR.target] = args[0];
  else if (ns === "workflows" || ns === "skills") {
    const n = (args[0] as { name?: unknown } | null | undefined)?.name;
    if (typeof n === "string") attributes[ATTR.target] = n;
  }
  if (ctx.runId) attributes[ATTR.runId] = ctx.runId;
  return counted(
    inSpan(name, attributes, async (span) => {
      const value = await run(ctx);
      span?.setAttribute(ATTR.ok, true);
      return value;
    }, { parent: ctx.trace }),
  );
}

function traceToolCall<C extends TracedCallContext, T>(api: OtelApi, op: string, args: readonly unknown[], ctx: C, executor: string, run: (ctx: C) => Promise<T>): Promise<T> {
  const [tool, callable, callArgs] = args;
  const toolName = typeof tool === "string" ? tool : String(tool);
  const callableName = typeof callable === "string" ? callable : null;
  const label = callableName === null ? toolName : `${toolName}.${callableName}`;
  const attributes: Attributes = {
    [ATTR.genAiOperation]: "execute_tool",
    [ATTR.genAiToolName]: label,
    [ATTR.tool]: toolName,
    [ATTR.executor]: executor,
  };
  if (callableName !== null) attributes[ATTR.callable] = callableName;
  if (op === "session") attributes[ATTR.operation] = "session";
  if (ctx.runId) attributes[ATTR.runId] = ctx.runId;
  const argsText = contentAttribute(callArgs);
  if (argsText !== undefined) attributes[ATTR.toolArgs] = argsText;
  const record: ToolCallRecord = { type: undefined, attempts: 0, approvalWaits: 0, approvalWaitMs: 0 };
  const hold = ctx.holdDeadline;
  // Copied, then set: on Node 20 `{ ...ctx, holdDeadline }` takes V8's slow path (microseconds, every traced call).
  const traced: C = Object.assign({}, ctx);
  traced.holdDeadline = () => {
    record.approvalWaits++;
    const since = performance.now();
    const release = hold?.();
    let released = false;
    return () => {
      if (!released) record.approvalWaitMs += performance.now() - since;
      released = true;
      release?.();
    };
  };
  const startedAt = performance.now();
  // The record rides in the span's parent context, so the span's own context (active while the call runs) carries it.
  const parent = ((ctx.trace as Context | undefined) ?? api.context.active()).setValue(keyOf(api), record) as unknown as TraceContext;
  return inSpan(`execute_tool ${label}`, attributes, async (span) => {
    let ok = false;
    let failure: unknown;
    try {
      const value = await run(traced);
      ok = true;
      const resultText = contentAttribute(value);
      if (resultText !== undefined) span?.setAttribute(ATTR.toolResult, resultText);
      return value;
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      if (span) {
        const after: Attributes = { [ATTR.ok]: ok, [ATTR.toolRetries]: Math.max(0, record.attempts - 1), [ATTR.toolApprovalWaits]: record.approvalWaits };
        if (record.type !== undefined) {
          after[ATTR.toolType] = record.type;
          after[ATTR.genAiToolType] = "function";
        }
        if (record.approvalWaits > 0) after[ATTR.toolApprovalWaitMs] = Math.round(record.approvalWaitMs);
        const code = (failure as { code?: unknown } | undefined)?.code;
        if (typeof code === "string") after[ATTR.toolErrorCode] = code;
        span.setAttributes(after);
      }
      const err = ok ? undefined : errorName(failure);
      recordToolCall({ tool: toolName, executor, ok, errorName: err }, performance.now() - startedAt);
      if (err !== undefined) recordCallError("tools", err);
    }
  }, { parent });
}

function errorName(err: unknown): string {
  return err instanceof Error && err.name ? err.name : "Error";
}
