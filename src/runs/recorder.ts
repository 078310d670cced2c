/**
 * The run ledger's hook under the one host RPC provider (HostServices.setRunHook): every namespace
 * call of a durable run passes here, whatever the executor, and is
 *
 * - served from the ledger when the run is a resume and the ledger has that call (same `seq`, same
 *   operation, same arguments; anything else is a ReplayDivergenceError naming the call),
 * - decided when the ledger holds it as pending (approve / edit → run now; reject → the agent's
 *   code gets a PERMISSION ToolError),
 * - otherwise run for real and logged (written behind the run in batches, all committed before
 *   the run pauses or ends, so a paused run's ledger holds everything its code has seen).
 *
 * A call that needs a human's decision calls `ctx.pause(reason)`: its entry is logged as pending and
 * its promise never settles. Once every call in flight is either done or pending, and no new call
 * arrived for a short quiet time (so the calls of one Promise.all are decided together), the run
 * is stopped (`onPause`) and ends as paused. No process waits for the human.
 */
import { ToolError } from "../errors.js";
import type { CallContext } from "../tools/protocol.js";
import type { RunHook } from "../execution/host.js";
import { toWireError } from "../execution/wire-error.js";
import type { EncodedValue, LedgerEntry, RunStore } from "../storage/runs.js";
import { decodeValue, encodeValue, encodedBytes } from "./codec.js";
import { LedgerLimitError, ReplayDivergenceError } from "./errors.js";
import { recordLedgerWrite } from "../telemetry/metrics.js";

export interface Decision {
  /** The pending call's id (`pending[i].id`). */
  id: string;
  decision: "approve" | "edit" | "reject";
  /** "edit": the tool call's new arguments. */
  args?: Record<string, unknown>;
  /** Why (shown to the agent on "reject", kept in the ledger). */
  reason?: string;
}

export interface LedgerBounds {
  /** Calls one run may log; the next one fails with LedgerLimitError. */
  maxCalls: number;
  /** Largest logged call (arguments + result, encoded); a larger one makes the run unresumable. */
  maxEntryBytes: number;
  /** Largest ledger of one run; past it the run is unresumable. */
  maxRunBytes: number;
}

/** How long no call may arrive, with every call done or pending, before the run pauses. */
const QUIET_MS = 30;
/** Clock readings one run may tape (the guest's own cap is larger; past this the run is unresumable). */
const MAX_TAPE = 100_000;

export const pendingId = (seq: number): string => `call-${seq}`;

/** One durable run in progress: what it logged, what it serves, what waits. */
export class ActiveRun {
  private nextSeq = 0;
  private tape: number[] = [];
  private tapeTotal = 0;
  private liveInFlight = 0;
  private activity = 0;
  private quietTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly queued = new Map<number, LedgerEntry>();
  private flushing: Promise<void> | null = null;
  /** Entries logged by this pass (and those replayed), by seq. */
  readonly entries = new Map<number, LedgerEntry>();
  readonly pending: LedgerEntry[] = [];
  bytes = 0;
  /** Why this run cannot be resumed (a result too large to log, a failed ledger write), if so. */
  unresumable: string | null = null;
  divergence: ReplayDivergenceError | null = null;
  private paused = false;

  constructor(
    readonly id: string,
    private readonly store: RunStore,
    private readonly bounds: LedgerBounds,
    /** The ledger of the run so far (a resume); [] for a new run. */
    private readonly logged: readonly LedgerEntry[],
    private readonly decisions: ReadonlyMap<string, Decision>,
    /** Stops the run: called once, when it pauses or diverges. */
    private readonly stop: (why: "paused" | "diverged") => void,
  ) {
    for (const e of logged) this.bytes += e.bytes;
  }

  /** The hook's body for this run's calls. */
  handle(call: Parameters<RunHook>[0], next: Parameters<RunHook>[1]): Promise<{ value: unknown; release: () => void }> {
    if (call.ns === "runs" && call.op === "tape") return Promise.resolve(this.takeTape(call.args[0]));
    const seq = this.nextSeq++;
    this.activity++;
    const tape = this.tape;
    this.tape = [];
    let args: EncodedValue;
    try {
      args = encodeValue(call.args);
    } catch {
      // Arguments the codec cannot carry cannot reach a tool either: let the call fail as usual.
      return next(call.ctx);
    }
    const logged = this.logged[seq];
    if (logged) return this.replay(seq, logged, args, call, next);
    if (this.paused) return new Promise(() => {});
    if (seq >= this.bounds.maxCalls) {
      return Promise.reject(new LedgerLimitError(`${call.ns}.${call.op}: this run made ${this.bounds.maxCalls.toLocaleString("en-US")} namespace calls, the most one durable run may log (durable.maxCallsPerRun)`));
    }
    const entry: LedgerEntry = { seq, ns: call.ns, op: call.op, args, state: "applied", startedAt: new Date().toISOString(), bytes: encodedBytes(args), ...(tape.length ? { tape } : {}) };
    return this.live(entry, call.ctx, next);
  }

  private takeTape(raw: unknown): { value: unknown; release: () => void } {
    const values = Array.isArray(raw) ? raw.filter((v): v is number => typeof v === "number" && Number.isFinite(v)) : [];
    this.tapeTotal += values.length;
    if (this.tapeTotal > MAX_TAPE) this.unresumable ??= `the code read the clock more than ${MAX_TAPE.toLocaleString("en-US")} times`;
    else this.tape.push(...values);
    return { value: null, release: () => {} };
  }

  private async live(entry: LedgerEntry, ctx: CallContext, next: Parameters<RunHook>[1]): Promise<{ value: unknown; release: () => void }> {
    this.liveInFlight++;
    const pause = (reason: string): Promise<never> => {
      if (this.unresumable) {
        return Promise.reject(new ToolError({ tool: entry.ns, callable: entry.op, code: "PERMISSION", message: `this call needs approval (${reason}), but the run cannot pause: ${this.unresumable}` }));
      }
      entry.state = "pending";
      entry.reason = reason.slice(0, 2_000);
      this.pending.push(entry);
      this.entries.set(entry.seq, entry);
      this.notePending();
      return new Promise<never>(() => {});
    };
    // A paused call never settles; it is counted out when the run pauses.
    return this.runCounted(entry, () => next({ ...ctx, pause }));
  }

  /**
   * Runs a call counted in flight (the caller counted it in), logs how it ended, and counts it out
   * for the quiet check that pauses the run.
   */
  private async runCounted(entry: LedgerEntry, run: () => Promise<{ value: unknown; release: () => void }>): Promise<{ value: unknown; release: () => void }> {
    try {
      const held = await run();
      await this.settle(entry, { ok: true, value: held.value });
      return held;
    } catch (err) {
      await this.settle(entry, { ok: false, error: err });
      throw err;
    } finally {
      this.liveInFlight--;
      this.activity++;
      this.checkQuiet();
    }
  }

  /** Logs a finished call (queued: see write()). */
  private async settle(entry: LedgerEntry, outcome: { ok: true; value: unknown } | { ok: false; error: unknown }): Promise<void> {
    entry.endedAt = new Date().toISOString();
    if (outcome.ok) {
      try {
        const result = encodeValue(outcome.value);
        const size = encodedBytes(result);
        if (size > this.bounds.maxEntryBytes) this.unresumable ??= `call #${entry.seq} (${entry.ns}.${entry.op}) returned ${size.toLocaleString("en-US")} bytes, more than durable.maxEntryBytes`;
        else {
          entry.result = result;
          entry.bytes += size;
        }
      } catch (err) {
        this.unresumable ??= `call #${entry.seq}'s result cannot be logged: ${err instanceof Error ? err.message : String(err)}`;
      }
    } else {
      const w = toWireError(outcome.error);
      entry.error = { name: w.name, message: w.message, ...(w.details ? { details: JSON.parse(JSON.stringify(w.details)) as Record<string, never> } : {}) };
    }
    this.bytes += entry.bytes;
    if (this.bytes > this.bounds.maxRunBytes) this.unresumable ??= `the run's ledger is larger than durable.maxRunBytes (${this.bounds.maxRunBytes.toLocaleString("en-US")} bytes)`;
    this.entries.set(entry.seq, entry);
    await this.write(entry);
  }

  /**
   * Queues an entry for the ledger. Writes go behind the run, in batches (one putEntries per batch:
   * one HSET on Redis): nothing can resume a run before it pauses, and a pause or the run's end
   * waits for every write (`flushed`). A process killed mid-run may leave its last calls unlogged;
   * such a run was never resumable.
   */
  private write(entry: LedgerEntry): Promise<void> {
    this.queued.set(entry.seq, entry);
    this.flushing ??= this.flushLoop().finally(() => (this.flushing = null));
    return Promise.resolve();
  }

  private async flushLoop(): Promise<void> {
    while (this.queued.size > 0) {
      const batch = [...this.queued.values()];
      this.queued.clear();
      await this.store.putEntries(this.id, batch).then(
        () => recordLedgerWrite(batch.length, batch.reduce((sum, e) => sum + e.bytes, 0)),
        (err: unknown) => {
          this.unresumable ??= `the ledger could not be written: ${err instanceof Error ? err.message : String(err)}`;
        },
      );
    }
  }

  private async replay(seq: number, logged: LedgerEntry, args: EncodedValue, call: Parameters<RunHook>[0], next: Parameters<RunHook>[1]): Promise<{ value: unknown; release: () => void }> {
    if (logged.ns !== call.ns || logged.op !== call.op || logged.args.json !== args.json || logged.args.buffers.join() !== args.buffers.join()) {
      const err = new ReplayDivergenceError(
        `The code diverged from its ledger at call #${seq}: it now calls ${describeCall(call.ns, call.op, args)} where the ledger has ${describeCall(logged.ns, logged.op, logged.args)}. ` +
          "A resumed run must make the same calls in the same order; nothing after this point was run.",
        seq,
      );
      if (!this.divergence) {
        this.divergence = err;
        this.stop("diverged");
      }
      return new Promise(() => {});
    }
    this.entries.set(seq, logged);
    if (logged.state === "pending") return this.decide(logged, call, next);
    if (logged.state === "rejected") throw rejection(call, logged.reason);
    if (logged.error) throw replayedError(logged.error);
    return { value: logged.result ? decodeValue(logged.result) : undefined, release: () => {} };
  }

  private async decide(entry: LedgerEntry, call: Parameters<RunHook>[0], next: Parameters<RunHook>[1]): Promise<{ value: unknown; release: () => void }> {
    const decision = this.decisions.get(pendingId(entry.seq));
    const at = new Date().toISOString();
    if (!decision || decision.decision === "reject") {
      entry.state = "rejected";
      entry.reason = decision?.reason ?? "rejected";
      entry.decision = { decision: "reject", at };
      entry.endedAt = at;
      await this.write(entry);
      throw rejection(call, entry.reason);
    }
    let args: readonly unknown[] | undefined;
    if (decision.decision === "edit" && decision.args) {
      // A tool call's arguments are its third: tools.call(tool, callable, args).
      args = call.ns === "tools" && call.op === "call" ? [call.args[0], call.args[1], decision.args] : call.args;
      entry.decision = { decision: "edit", at, args: encodeValue(decision.args) };
    } else entry.decision = { decision: decision.decision, at };
    entry.state = "applied";
    this.liveInFlight++;
    return this.runCounted(entry, () => next({ ...call.ctx, approved: true }, args));
  }

  /** Pauses once calls are all done or pending and none arrived for QUIET_MS. */
  private checkQuiet(): void {
    if (this.paused || this.pending.length === 0 || this.quietTimer) return;
    const seen = this.activity;
    this.quietTimer = setTimeout(() => {
      this.quietTimer = null;
      // Paused calls are still counted live until the pause: those are exactly `pending`.
      if (this.activity === seen && this.liveInFlight - this.pending.length <= 0) {
        this.paused = true;
        this.stop("paused");
      } else this.checkQuiet();
    }, QUIET_MS);
  }

  /** A call just became pending: start the quiet check. */
  private notePending(): void {
    this.activity++;
    this.checkQuiet();
  }

  /** Every ledger write of this pass, done. */
  async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Stops the quiet timer (the run ended). */
  dispose(): void {
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = null;
  }

  get isPaused(): boolean {
    return this.paused || this.pending.length > 0;
  }
}

/** The hook for HostServices: routes each call to the run it belongs to (by CallContext.runId). */
export class RunRecorder {
  private readonly runs = new Map<string, ActiveRun>();

  readonly hook: RunHook = (call, next) => {
    const run = call.ctx.runId === undefined ? undefined : this.runs.get(call.ctx.runId);
    return run ? run.handle(call, next) : null;
  };

  add(run: ActiveRun): void {
    this.runs.set(run.id, run);
  }

  remove(run: ActiveRun): void {
    if (this.runs.get(run.id) === run) this.runs.delete(run.id);
    run.dispose();
  }
}

function describeCall(ns: string, op: string, args: EncodedValue): string {
  const text = args.json.length > 200 ? `${args.json.slice(0, 200)}…` : args.json;
  return `${ns}.${op} with arguments ${text}`;
}

function rejection(call: Parameters<RunHook>[0], reason: string | undefined): ToolError {
  const [tool, callable] = call.args as [unknown, unknown];
  const label = call.ns === "tools" && typeof tool === "string" ? `tools.${tool}${typeof callable === "string" ? `.${callable}` : ""}` : `${call.ns}.${call.op}`;
  return new ToolError({ tool: typeof tool === "string" ? tool : call.ns, callable: typeof callable === "string" ? callable : null, code: "PERMISSION", message: `${label} was rejected by a reviewer${reason ? `: ${reason}` : ""}` });
}

function replayedError(e: NonNullable<LedgerEntry["error"]>): Error {
  const err = new Error(e.message);
  Object.defineProperty(err, "name", { value: e.name, enumerable: false, configurable: true, writable: true });
  if (e.details) Object.assign(err, e.details);
  return err;
}
