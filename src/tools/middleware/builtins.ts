/**
 * The built-in middleware. Each is a factory returning one `ToolMiddleware`; compose them in the
 * order they should wrap a call, e.g. [auditLog(...), policy(...), approval(...), retry(...)]:
 * the audit log then also records denied calls, and retries happen inside the approval.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { ToolError, ValidationError, type ToolErrorCode } from "../../errors.js";
import { globToRegExp, matchesAny } from "./glob.js";
import { callName, keepsArgs, type ToolCallContext, type ToolMiddleware } from "./types.js";

// ---- audit ------------------------------------------------------------------------------------

export interface AuditEvent {
  time: string;
  requestId: string;
  runId: string;
  executor: string;
  /** `tool.callable` */
  call: string;
  args: Record<string, unknown>;
  ok: boolean;
  durationMs: number;
  error?: { name: string; code?: string; message: string };
}

export interface AuditOptions {
  /** Append one JSON line per call to this file (created with its folder). */
  file?: string;
  /** Called with each event (after the call ended). */
  onEvent?: (event: AuditEvent) => void;
  /** Leave arguments out of the events (they may hold data you do not want in logs). Default false. */
  omitArgs?: boolean;
}

/** Records every call with its outcome, as JSON lines in a file and/or through a callback. */
export function auditLog(options: AuditOptions): ToolMiddleware {
  if (!options.file && !options.onEvent) throw new ValidationError("auditLog needs a file or an onEvent callback");
  const file = options.file ? path.resolve(options.file) : undefined;
  if (file) mkdirSync(path.dirname(file), { recursive: true });
  return async (ctx, next) => {
    const started = performance.now();
    const args = options.omitArgs ? {} : { ...ctx.args };
    const record = (ok: boolean, err?: unknown) => {
      const event: AuditEvent = {
        time: new Date().toISOString(),
        requestId: ctx.requestId,
        runId: ctx.runId,
        executor: ctx.executor,
        call: callName(ctx),
        args,
        ok,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      };
      if (err !== undefined) {
        const e = err as { name?: string; code?: string; message?: string };
        event.error = { name: e.name ?? "Error", message: String(e.message ?? err) };
        if (e.code) event.error.code = e.code;
      }
      // Synchronous append: one small write per call keeps lines whole and in order, even if the process dies next.
      if (file) appendFileSync(file, `${safeJson(event)}\n`);
      options.onEvent?.(event);
    };
    try {
      const result = await next();
      record(true);
      return result;
    } catch (err) {
      record(false, err);
      throw err;
    }
  };
}

function safeJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    typeof v === "bigint" ? v.toString() : v instanceof Uint8Array ? `<${v.byteLength} bytes>` : v,
  );
}

// ---- policy -----------------------------------------------------------------------------------

export interface PolicyOptions {
  /** When given, only calls matching one of these globs run. */
  allow?: string[];
  /** Calls matching one of these globs never run (wins over allow). */
  deny?: string[];
}

/**
 * Allow/deny by glob on `tool.callable` (see glob.ts). A refused call is a PERMISSION ToolError; the
 * tool never runs. A deny rule also refuses a call that runs the same command under another name
 * (`ctx.sameCommandAs`: the escape hatch `date({ format: "+%s" })` when `date.epoch` is denied),
 * unless `allow` names that call exactly — allowing `date` is a deliberate choice to let it run
 * any command; a glob like `**` is not.
 */
export function policy(options: PolicyOptions): ToolMiddleware {
  const allow = options.allow?.map(globToRegExp);
  const deny = (options.deny ?? []).map(globToRegExp);
  const denied = () => `deny: ${options.deny!.join(", ")}`;
  return async (ctx, next) => {
    const name = callName(ctx);
    if (matchesAny(name, deny)) throw permission(ctx, `${name} is denied by policy (${denied()})`);
    if (allow && !matchesAny(name, allow)) throw permission(ctx, `${name} is not allowed by policy (allow: ${options.allow!.join(", ")})`);
    if (deny.length && !options.allow?.includes(name)) {
      const same = ctx.sameCommandAs?.().find((other) => matchesAny(other, deny));
      if (same) throw permission(ctx, `${name} runs the same command as ${same}, which is denied by policy (${denied()}); allow '${name}' explicitly to let it run`);
    }
    return next();
  };
}

// ---- approval ---------------------------------------------------------------------------------

/**
 * What an approver decides: `true` runs the call, `false` refuses it, `{ approve: false, reason }`
 * refuses with a reason the agent sees, `{ approve: true, args }` runs it with edited arguments;
 * `"pending"` / `{ pending: true, reason }`: a human decides later — a durable run pauses
 * (docs/durable-runs.md), any other run refuses the call.
 */
export type ApprovalDecision = boolean | "pending" | { approve: false; reason?: string } | { approve: true; args?: Record<string, unknown> } | { pending: true; reason?: string };
/** `signal` aborts when the run is stopped (timeout, cancel, close): an approver asking a human can give up then. */
export type Approver = (call: Readonly<Pick<ToolCallContext, "tool" | "callable" | "args" | "executor" | "runId" | "requestId" | "signal">>) => ApprovalDecision | Promise<ApprovalDecision>;

export interface ApprovalOptions {
  /** Only calls matching these globs (or running the same command as a call they match) need approval; default all. */
  only?: string[];
}

/**
 * Asks `approver` before each call. A refusal is a PERMISSION ToolError and the tool never runs.
 * The run's deadline is paused while the approver decides (where the executor can pause it): time
 * a human takes is not the code's time.
 */
export function approval(approver: Approver, options: ApprovalOptions = {}): ToolMiddleware {
  const only = options.only?.map(globToRegExp);
  return async (ctx, next) => {
    // A tool's needs_approval asks this approver too, whatever `only` says.
    if (ctx.approved === true) return next();
    // A rule on a recipe also covers calls running the same command (the escape hatch with the same argv).
    if (only && !matchesAny(callName(ctx), only) && ctx.needsApproval === undefined && !(ctx.sameCommandAs?.() ?? []).some((other) => matchesAny(other, only))) return next();
    const release = ctx.holdDeadline?.();
    let decision: ApprovalDecision;
    try {
      decision = await approver({ tool: ctx.tool, callable: ctx.callable, args: { ...ctx.args }, executor: ctx.executor, runId: ctx.runId, requestId: ctx.requestId, signal: ctx.signal });
    } finally {
      release?.();
    }
    if (decision === "pending" || (typeof decision === "object" && "pending" in decision)) {
      // Pause instead of block: a durable run ends now and resumes once a human decided.
      const reason = typeof decision === "object" && decision.reason ? decision.reason : ctx.needsApproval ?? `${callName(ctx)} needs approval`;
      if (ctx.pause) return ctx.pause(reason);
      throw permission(ctx, `${callName(ctx)} is pending approval, but this run cannot pause (it is not a durable run: new Session({ durable }))`);
    }
    if (decision === false || (decision !== true && decision.approve === false)) {
      const reason = typeof decision === "object" && decision.reason ? `: ${decision.reason}` : "";
      throw permission(ctx, `${callName(ctx)} was not approved${reason}`);
    }
    ctx.approved = true;
    if (decision !== true && decision.args) ctx.args = { ...decision.args };
    return next();
  };
}

// ---- retry ------------------------------------------------------------------------------------

export interface RetryOptions {
  /** Total attempts including the first; default 3. */
  attempts?: number;
  /** Delay before the first retry; doubles each time (with ±25% jitter), capped by maxDelayMs. Default 100. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * Which ToolError codes are retried. Default: the transient ones, TIMEOUT, DEPENDENCY and
   * CONFLICT — the same input can succeed later. Input errors (INVALID_INPUT, MISSING_PARAM, ...)
   * are recoverable by the agent changing its input, not by repeating it, so they are not retried
   * unless listed here.
   */
  codes?: ToolErrorCode[];
}

export const DEFAULT_RETRY_CODES: readonly ToolErrorCode[] = ["TIMEOUT", "DEPENDENCY", "CONFLICT"];

/** Retries failed calls with exponential backoff. Never retries once the run's signal is aborted. */
export function retry(options: RetryOptions = {}): ToolMiddleware {
  const attempts = options.attempts ?? 3;
  if (!Number.isInteger(attempts) || attempts < 1) throw new ValidationError(`retry attempts must be a whole number >= 1; got ${attempts}`);
  const base = options.baseDelayMs ?? 100;
  const max = options.maxDelayMs ?? 5_000;
  const codes = new Set(options.codes ?? DEFAULT_RETRY_CODES);
  return async (ctx, next) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await next();
      } catch (err) {
        const code = (err as { code?: ToolErrorCode }).code;
        if (attempt >= attempts || !code || !codes.has(code) || ctx.signal?.aborted) throw err;
        const delay = Math.min(max, base * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };
}

// ---- limits -----------------------------------------------------------------------------------

/**
 * Counts tool calls per run and refuses the one past `max` with a PERMISSION ToolError. Only the
 * most recent runs are kept: a run's calls arrive while it runs.
 */
export class PerRunCallLimit {
  private readonly counts = new Map<string, number>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new ValidationError(`callsPerRun needs a whole number >= 1; got ${max}`);
  }

  /** Counts one call of `tool.callable` in run `runId`; throws when it is one too many. */
  count(runId: string, tool: string, callable: string | null): void {
    const n = (this.counts.get(runId) ?? 0) + 1;
    this.counts.set(runId, n);
    // Keep the map small: only recent runs matter.
    if (this.counts.size > 100) this.counts.delete(this.counts.keys().next().value as string);
    if (n > this.max) throw new ToolError({ tool, callable, code: "PERMISSION", message: `more than ${this.max} tool calls in one run (callsPerRun limit); split the work across runs` });
  }
}

/** At most `max` tool calls per run (an agent's loop gone wrong); the next is a PERMISSION ToolError. */
export function callsPerRun(max: number): ToolMiddleware {
  const limit = new PerRunCallLimit(max);
  return keepsArgs(async (ctx, next) => {
    limit.count(ctx.runId, ctx.tool, ctx.callable);
    return next();
  });
}

function permission(ctx: ToolCallContext, message: string): ToolError {
  return new ToolError({ tool: ctx.tool, callable: ctx.callable, code: "PERMISSION", message });
}
