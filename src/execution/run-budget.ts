/**
 * The time budget of one run, as tool calls see it.
 *
 * Rule (the same in every executor): a run's timeout is wall-clock and covers everything the run
 * does, tool calls included. When the run is stopped (timeout, cancel, close) its calls still in
 * flight are aborted, which kills a CLI tool's process group: a run never waits on a tool past its
 * own deadline, and a tool never outlives the run that called it. A tool call also gets its own
 * limit, `min(the tool's own timeout, the time left in the run + RUN_STOP_MARGIN_MS)`: a backstop
 * set a little past the deadline, so that the run's stop comes first and the run ends as a
 * TimeoutError (variables kept when the guest was only waiting) rather than with the tool's
 * TIMEOUT error, which the agent's code could catch and carry on past its deadline.
 *
 * The deadline can be held (`holdDeadline`, reached by tool middleware through the call context)
 * while a human decides on an approval: the held time is added to the deadline when released.
 * Executors that enforce the deadline themselves ask `remainingMs()` before stopping a run.
 */
import { randomUUID } from "node:crypto";
import type { CallContext } from "../tools/protocol.js";
import { captureTraceContext, type TraceContext } from "../telemetry/spans.js";

/** How far past the run's deadline a tool call's own time limit lies (see above). */
export const RUN_STOP_MARGIN_MS = 2_000;

const BETWEEN_RUNS = "between-runs";

export class RunBudget {
  private readonly controller = new AbortController();
  private deadline: number;
  private holds = 0;
  private readonly runId: string;
  private heldSince = 0;
  /** The context the run started in (its session.run span): parent of its namespace calls' spans, which arrive outside it (IPC). */
  private readonly trace: TraceContext | undefined;

  /** `executor` and the generated run id reach tool middleware (audit logs, per-run limits). */
  constructor(
    timeoutMs: number,
    private readonly executor: string,
    runId?: string,
  ) {
    this.runId = runId ?? randomUUID();
    this.deadline = performance.now() + timeoutMs;
    // Between runs nothing is the parent (the context there is whatever created the executor).
    this.trace = runId === BETWEEN_RUNS ? undefined : captureTraceContext();
  }

  /** The run's id (what tool calls see as `runId`). */
  get id(): string {
    return this.runId;
  }

  /** Between runs: calls from code left running (not awaited) get no run deadline, only their own. */
  static idle(executor: string): RunBudget {
    return new RunBudget(Number.POSITIVE_INFINITY, executor, BETWEEN_RUNS);
  }

  /**
   * A new context for one namespace call. Every field a later step may set (`place` by the host,
   * `pause` and `approved` by the run ledger) is in the literal, undefined until then: V8 gives the
   * object one fixed shape, and setting those fields is a store in place. Adding them later (or
   * copying the object to add them) changed its shape on every call, which showed as microseconds
   * per call in a durable container session, whose calls get all three.
   */
  callContext(): CallContext {
    const left = this.remainingMs();
    const finite = Number.isFinite(left);
    return {
      timeoutMs: finite ? Math.max(1, Math.floor(left)) + RUN_STOP_MARGIN_MS : undefined,
      signal: this.controller.signal,
      deadline: finite ? Date.now() + left : undefined,
      executor: this.executor,
      runId: this.runId,
      holdDeadline: this.holdDeadline,
      place: undefined,
      trace: this.trace,
      pause: undefined,
      approved: undefined,
    };
  }

  /** Milliseconds until the deadline; Infinity while held (nothing may stop the run for time then). */
  remainingMs(): number {
    if (this.holds > 0) return Number.POSITIVE_INFINITY;
    return this.deadline - performance.now();
  }

  /** `hold`, as every call context of the run hands it on (one function per run, not per call). */
  private readonly holdDeadline = (): (() => void) => this.hold();

  /** Stops the clock until the returned function is called (once; later calls do nothing). Holds nest. */
  hold(): () => void {
    if (this.holds++ === 0) this.heldSince = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds === 0) this.deadline += performance.now() - this.heldSince;
    };
  }

  abort(reason: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(new Error(reason));
  }
}
