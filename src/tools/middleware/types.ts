/**
 * Tool middleware: `async (ctx, next) => result`, applied on the host to every tool call from every
 * executor, in order, after the arguments were validated against the tool's schema and before the
 * adapter runs. Each concern (audit, policy, approval, retry, limits) is one small function.
 */
import type { CommandPlace } from "../protocol.js";

import type { CommandRunner } from "../protocol.js";

export interface ToolCallContext {
  tool: string;
  /** Recipe / MCP tool / endpoint; null for the escape hatch `tools.<tool>(args)`. */
  callable: string | null;
  /** Validated arguments. Middleware may replace or edit them; edits are validated again before the adapter runs. */
  args: Record<string, unknown>;
  /** "in-process", "subprocess", ... or "host" for calls made through Session.callTool. */
  executor: string;
  /** Unique per call. */
  requestId: string;
  /** The run the call belongs to ("host" outside runs). */
  runId: string;
  /** Time the call may take (tool timeout or time left in the run), when known. */
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
  /**
   * Names (`tool.callable`) of other calls that would run the very command this call runs with its
   * current `args` — `tools.date({ format: "+%s" })` runs what `date.epoch` runs. Policy and approval
   * rules on those names cover this call too. Absent or empty: the call is only its own name.
   */
  sameCommandAs?: () => string[];
  /** Where a command-line tool's argv runs (a container session's container); passed on to the adapter. */
  runCommand?: CommandRunner;
  /** Pauses the run's deadline until the returned function is called (see CallContext.holdDeadline). */
  holdDeadline?: () => () => void;
  /** In a durable run: ends the run as paused, this call waiting for a decision (see CallContext.pause). */
  pause?: (reason: string) => Promise<never>;
  /** Set once a human approved the call (an approval step, or a decision on a paused run); approval steps let it through. */
  approved?: boolean;
  /** The tool marks this call `needs_approval` (the reason): it runs only once approved. */
  needsApproval?: string;
  /** Where commands of the call run (see CallContext.place); carried through the chain to the adapter. */
  place?: CommandPlace;
}

export type ToolMiddleware = (ctx: ToolCallContext, next: () => Promise<unknown>) => Promise<unknown>;

/** Middleware marked by keepsArgs. */
const argsKeepers = new WeakSet<ToolMiddleware>();

/**
 * Marks `middleware` as one that never replaces or edits `ctx.args` (it counts, logs or refuses):
 * after a chain of only such middleware the registry hands the adapter the arguments it validated
 * at the boundary without validating them a second time. Only for middleware whose code shows it.
 */
export function keepsArgs<M extends ToolMiddleware>(middleware: M): M {
  argsKeepers.add(middleware);
  return middleware;
}

/** True when every middleware of `chain` was marked by keepsArgs. */
export function allKeepArgs(chain: readonly ToolMiddleware[]): boolean {
  return chain.every((m) => argsKeepers.has(m));
}

/** `tool.callable`, or `tool` for the escape hatch: what glob rules and logs name a call by. */
export function callName(ctx: Pick<ToolCallContext, "tool" | "callable">): string {
  return ctx.callable === null ? ctx.tool : `${ctx.tool}.${ctx.callable}`;
}

/**
 * Runs `middleware` around `final`, first middleware outermost. `next()` may be called again (retry
 * does); each call runs the rest of the chain again.
 */
export function compose(middleware: readonly ToolMiddleware[], final: (ctx: ToolCallContext) => Promise<unknown>): (ctx: ToolCallContext) => Promise<unknown> {
  return (ctx) => {
    const step = (i: number): Promise<unknown> => {
      const mw = middleware[i];
      return mw ? mw(ctx, () => step(i + 1)) : final(ctx);
    };
    return step(0);
  };
}
