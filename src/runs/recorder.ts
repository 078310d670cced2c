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
 * The per-call bookkeeping is kept small (docs/durable-runs.md "What the ledger costs"): no await
 * between a call's reply and the code getting it, one timestamp string per millisecond, entries
 * dropped from memory once written, and writes coalesced (FLUSH_DELAY_MS or FLUSH_BATCH entries,
 * whichever comes first), so a run of a thousand quick calls is a handful of storage writes.
 *
 * A call that needs a human's decision calls `ctx.pause(reason)`: its entry is logged as pending and
 * its promise never settles. Once every call in flight is either done or pending, and no new call
 * arrived for a short quiet time (so the calls of one Promise.all are decided together), the run
 * is stopped (`onPause`) and ends as paused. No process waits for the human.
 */
import { ToolError } from "../errors.js";
import type { CallContext } from "../tools/protocol.js";
import type { CallObserver, RunHook, RunHookNext } from "../execution/host.js";
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
/** How long a logged call may wait in memory for others to share its storage write. */
const FLUSH_DELAY_MS = 100;
/** Entries that make a batch worth writing at once (bounds the batch and what waits in memory). */
const FLUSH_BATCH = 512;
/** Bytes (arguments + results) that make a batch worth writing at once. */
const FLUSH_BYTES = 1_048_576;
/** Clock readings one run may tape (the guest's own cap is larger; past this the run is unresumable). */
const MAX_TAPE = 100_000;

export const pendingId = (seq: number): string => `call-${seq}`;

/** One durable run in progress: what it logged, what it serves, what waits. */
export class ActiveRun implements CallObserver<LedgerEntry> {
  private nextSeq = 0;
  private tape: number[] = [];
  private tapeTotal = 0;
  private liveInFlight = 0;
  private activity = 0;
  private quietTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly queued = new Map<number, LedgerEntry>();
  private queuedBytes = 0;
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> | null = null;
  /** The run ended: a call that settles now (after a timeout, say) is no longer logged. */
  private ended = false;
  /**
   * Seqs logged by this pass (and those replayed), one byte each (seqs are dense, from 0): the run's
   * call count. The entries themselves leave memory once written.
   */
  private counted = new Uint8Array(256);
  private countedCalls = 0;
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
  handle(call: Parameters<RunHook>[0], next: RunHookNext): Promise<{ value: unknown; release: () => void }> {
    if (call.ns === "runs" && call.op === "tape") return Promise.resolve(this.takeTape(call.args[0]));
    const seq = this.nextSeq++;
    this.activity++;
    const tape = this.tape;
    if (tape.length > 0) this.tape = [];
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
    // Every field settle() sets is in the literal (undefined until then; JSON leaves it out): an
    // object that gains properties later grows a second allocation and changes shape on every call.
    const entry: LedgerEntry = { seq, ns: call.ns, op: call.op, args, state: "applied", startedAt: isoNow(), endedAt: undefined, result: undefined, bytes: encodedBytes(args) };
    if (tape.length > 0) entry.tape = tape;
    return this.live(entry, call.ctx, next);
  }

  private takeTape(raw: unknown): { value: unknown; release: () => void } {
    const values = Array.isArray(raw) ? raw.filter((v): v is number => typeof v === "number" && Number.isFinite(v)) : [];
    this.tapeTotal += values.length;
    if (this.tapeTotal > MAX_TAPE) this.unresumable ??= `the code read the clock more than ${MAX_TAPE.toLocaleString("en-US")} times`;
    else this.tape.push(...values);
    return { value: null, release: () => {} };
  }

  private live(entry: LedgerEntry, ctx: CallContext, next: RunHookNext): Promise<{ value: unknown; release: () => void }> {
    this.liveInFlight++;
    const pause = (reason: string): Promise<never> => {
      if (this.unresumable) {
        return Promise.reject(new ToolError({ tool: entry.ns, callable: entry.op, code: "PERMISSION", message: `this call needs approval (${reason}), but the run cannot pause: ${this.unresumable}` }));
      }
      entry.state = "pending";
      entry.reason = reason.slice(0, 2_000);
      this.pending.push(entry);
      this.count(entry.seq);
      this.notePending();
      return new Promise<never>(() => {});
    };
    // A paused call never settles; it is counted out when the run pauses.
    ctx.pause = pause;
    return this.runCounted(entry, next, ctx);
  }

  /**
   * Runs a call counted in flight (the caller counted it in); callEnded logs how it ended and counts
   * it out for the quiet check that pauses the run. It is told from within the call's own
   * settlement (RunHookNext's observer), so the reply reaches the code in the same turn it arrives
   * and the ledger adds no promise per call (the log entry is queued, see write()).
   */
  private runCounted(entry: LedgerEntry, next: RunHookNext, ctx: CallContext, args?: readonly unknown[]): Promise<{ value: unknown; release: () => void }> {
    try {
      return next(ctx, args, this, entry);
    } catch (err) {
      this.callEnded(entry, false, err);
      return Promise.reject(err);
    }
  }

  /** CallObserver: a call run through runCounted ended. */
  callEnded(entry: LedgerEntry, ok: boolean, outcome: unknown): void {
    try {
      this.settle(entry, ok, outcome);
    } catch (err) {
      // Logging must not change the call's outcome; a run whose ledger missed a call cannot resume.
      this.unresumable ??= `call #${entry.seq} could not be logged: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      this.countOut();
    }
  }

  /** A call in flight ended: one fewer to wait for before the run may pause. */
  private countOut(): void {
    this.liveInFlight--;
    this.activity++;
    this.checkQuiet();
  }

  /** Counts `seq` among this pass's calls (once, however often it is logged). */
  private count(seq: number): void {
    if (seq >= this.counted.length) {
      const grown = new Uint8Array(Math.max(seq + 1, this.counted.length * 2));
      grown.set(this.counted);
      this.counted = grown;
    }
    if (this.counted[seq] === 0) {
      this.counted[seq] = 1;
      this.countedCalls++;
    }
  }

  /** Logs a finished call (queued: see write()): its reply (`ok`) or what it threw. */
  private settle(entry: LedgerEntry, ok: boolean, outcome: unknown): void {
    entry.endedAt = isoNow();
    if (ok) {
      try {
        const result = encodeValue(outcome);
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
      const w = toWireError(outcome);
      entry.error = { name: w.name, message: w.message, ...(w.details ? { details: JSON.parse(JSON.stringify(w.details)) as Record<string, never> } : {}) };
    }
    this.bytes += entry.bytes;
    if (this.bytes > this.bounds.maxRunBytes) this.unresumable ??= `the run's ledger is larger than durable.maxRunBytes (${this.bounds.maxRunBytes.toLocaleString("en-US")} bytes)`;
    this.count(entry.seq);
    this.write(entry);
  }

  /**
   * Queues an entry for the ledger. Writes go behind the run, in batches (one putEntries per batch:
   * one HSET on Redis), at most FLUSH_DELAY_MS after the entry, sooner when FLUSH_BATCH entries or
   * FLUSH_BYTES wait: nothing can resume a run before it pauses, and a pause or the run's end
   * writes whatever waits and waits for every write (`flushed`). A process killed mid-run may leave
   * its last calls unlogged; such a run was never resumable. Once the run has ended nothing more
   * is logged: a call that finishes after its run timed out does not appear in the ledger.
   */
  private write(entry: LedgerEntry): void {
    if (this.ended) return;
    if (!this.queued.has(entry.seq)) this.queuedBytes += entry.bytes;
    this.queued.set(entry.seq, entry);
    if (this.queued.size >= FLUSH_BATCH || this.queuedBytes >= FLUSH_BYTES) this.flushNow();
    else this.flushTimer ??= setTimeout(() => this.flushNow(), FLUSH_DELAY_MS);
  }

  /** Starts writing what is queued (one loop at a time; entries queued meanwhile go in its next batch). */
  private flushNow(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.queued.size > 0) this.flushing ??= this.flushLoop().finally(() => (this.flushing = null));
  }

  private async flushLoop(): Promise<void> {
    while (this.queued.size > 0) {
      const batch = [...this.queued.values()];
      const bytes = this.queuedBytes;
      this.queued.clear();
      this.queuedBytes = 0;
      await this.store.putEntries(this.id, batch).then(
        () => recordLedgerWrite(batch.length, bytes),
        (err: unknown) => {
          this.unresumable ??= `the ledger could not be written: ${err instanceof Error ? err.message : String(err)}`;
        },
      );
    }
  }

  private async replay(seq: number, logged: LedgerEntry, args: EncodedValue, call: Parameters<RunHook>[0], next: RunHookNext): Promise<{ value: unknown; release: () => void }> {
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
    this.count(seq);
    if (logged.state === "pending") return this.decide(logged, call, next);
    if (logged.state === "rejected") throw rejection(call, logged.reason);
    if (logged.error) throw replayedError(logged.error);
    return { value: logged.result ? decodeValue(logged.result) : undefined, release: () => {} };
  }

  private async decide(entry: LedgerEntry, call: Parameters<RunHook>[0], next: RunHookNext): Promise<{ value: unknown; release: () => void }> {
    const decision = this.decisions.get(pendingId(entry.seq));
    const at = new Date().toISOString();
    if (!decision || decision.decision === "reject") {
      entry.state = "rejected";
      entry.reason = decision?.reason ?? "rejected";
      entry.decision = { decision: "reject", at };
      entry.endedAt = at;
      this.write(entry);
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
    call.ctx.approved = true;
    return this.runCounted(entry, next, call.ctx, args);
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

  /** Calls this pass logged or replayed (pending ones included). */
  get calls(): number {
    return this.countedCalls;
  }

  /** Logs the pending calls (with why they wait) in the next write: the run is pausing. */
  logPending(): void {
    for (const entry of this.pending) this.write(entry);
  }

  /** Writes what waits and resolves once every ledger write of this pass is done. */
  async flushed(): Promise<void> {
    this.flushNow();
    while (this.flushing) await this.flushing;
  }

  /** The run ended: stops the quiet timer; from now on nothing more is logged. */
  dispose(): void {
    // Whatever still waits (the run threw before flushed()) is written behind it.
    this.flushNow();
    this.ended = true;
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

let isoMs = NaN;
let isoText = "";
let isoSecond = NaN;
let isoPrefix = "";
/**
 * `new Date().toISOString()`, formatted once per millisecond (quick calls share their timestamps)
 * and, within one second, by writing the milliseconds after the second's text: calls a few ms apart
 * (a container's) would otherwise each pay for a Date and its formatting (~3 µs).
 */
function isoNow(): string {
  return isoAt(Date.now());
}

/** `new Date(ms).toISOString()` through the caches above (exported for its test). */
export function isoAt(ms: number): string {
  if (ms === isoMs) return isoText;
  isoMs = ms;
  const second = ms - (ms % 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    // "2026-11-27T16:31:10." from "2026-11-27T16:31:10.000Z"
    isoPrefix = new Date(second).toISOString().slice(0, -4);
  }
  const rest = ms - second;
  isoText = `${isoPrefix}${rest < 10 ? "00" : rest < 100 ? "0" : ""}${rest}Z`;
  return isoText;
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
