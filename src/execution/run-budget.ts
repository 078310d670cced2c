/**
 * The time budget of one run, as tool calls see it.
 *
 * Rule (the same in every executor): a run's timeout is wall-clock and covers everything the run
 * does, tool calls included. A tool call made during a run gets `min(the tool's own timeout, the
 * time left in the run)`, and when the run is stopped (timeout, cancel, close) its calls still in
 * flight are aborted, which kills a CLI tool's process group. So a run never waits on a tool past
 * its own deadline, and a tool never outlives the run that called it.
 *
 * The deadline can be held (`holdDeadline`, reached by tool middleware through the call context)
 * while a human decides on an approval: the held time is added to the deadline when released.
 * Executors that enforce the deadline themselves ask `remainingMs()` before stopping a run.
 */
import { randomUUID } from "node:crypto";
import type { CallContext } from "../tools/protocol.js";

export class RunBudget {
  private readonly controller = new AbortController();
  private deadline: number;
  private holds = 0;
  private heldSince = 0;

  /** `executor` and the generated run id reach tool middleware (audit logs, per-run limits). */
  constructor(
    timeoutMs: number,
    private readonly executor: string,
    private readonly runId: string = randomUUID(),
  ) {
    this.deadline = performance.now() + timeoutMs;
  }

  /** The run's id (what tool calls see as `runId`). */
  get id(): string {
    return this.runId;
  }

  /** Between runs: calls from code left running (not awaited) get no run deadline, only their own. */
  static idle(executor: string): RunBudget {
    return new RunBudget(Number.POSITIVE_INFINITY, executor, "between-runs");
  }

  callContext(): CallContext {
    const left = this.remainingMs();
    const base: CallContext = { signal: this.controller.signal, executor: this.executor, runId: this.runId, holdDeadline: () => this.hold() };
    return Number.isFinite(left) ? { ...base, timeoutMs: Math.max(1, Math.floor(left)) } : base;
  }

  /** Milliseconds until the deadline; Infinity while held (nothing may stop the run for time then). */
  remainingMs(): number {
    if (this.holds > 0) return Number.POSITIVE_INFINITY;
    return this.deadline - performance.now();
  }

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
