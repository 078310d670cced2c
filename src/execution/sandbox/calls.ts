/**
 * Namespace calls from the sandbox on their way to the one RpcProvider (so middleware, run budgets
 * and error wording are those of every other executor) and their replies on the way back.
 *
 * The host protects itself here from a guest that starts calls without awaiting them: at most
 * `maxConcurrent` calls are dispatched at once (the rest wait in order), and at most `maxPending`
 * calls holding `maxPendingBytes` of arguments may be waiting or running; beyond that a call fails
 * at once with a clear error instead of piling up in the host's memory.
 */
import { ValidationError } from "../../errors.js";
import type { RpcProvider } from "../rpc/provider.js";
import type { CallMessage, HostToGuest } from "../rpc/protocol.js";
import { toWireError, type WireError } from "../wire-error.js";

const resolved = Promise.resolve();

/**
 * Runs `fn` in a microtask. Not queueMicrotask, which builds an AsyncResource per call (async_hooks
 * bookkeeping on queueing and on running): that was about a sixth of the host's time per sandbox
 * tool call. A promise reaction keeps the async context the same way.
 */
function soon(fn: () => void): void {
  void resolved.then(fn);
}

export interface CallLimits {
  maxConcurrent: number;
  maxPending: number;
  maxPendingBytes: number;
}

/** Where a reply goes: the instance and its own call id, and the run that made the call. */
export interface CallOrigin<T> {
  target: T;
  guestId: number;
  run: number;
}

interface CallRecord<T> extends CallOrigin<T> {
  id: number;
  ns: string;
  op: string;
  args: unknown[];
  bytes: number;
  dropped: boolean;
}

export type Settle<T> = (origin: CallOrigin<T>, ok: boolean, value: unknown) => void;

export class CallRouter<T> {
  private provider: RpcProvider | null = null;
  private readonly records = new Map<number, CallRecord<T>>();
  private readonly waiting: CallRecord<T>[] = [];
  private running = 0;
  private pendingBytes = 0;
  private nextId = 1;

  /**
   * `inline`: calls are dispatched as they are submitted. For an engine whose calls arrive as
   * messages from another process (deno), where no host code runs inside a sandbox entry; the
   * QuickJS engine submits from inside one, so by default a call is dispatched a microtask later.
   */
  constructor(
    private readonly limits: CallLimits,
    private readonly settle: Settle<T>,
    private readonly inline = false,
  ) {}

  attach(provider: RpcProvider): void {
    this.provider = provider;
  }

  /** Calls waiting or running. */
  get pending(): number {
    return this.records.size;
  }

  submit(origin: CallOrigin<T>, ns: string, op: string, args: unknown[], bytes: number): void {
    if (this.records.size >= this.limits.maxPending || this.pendingBytes + bytes > this.limits.maxPendingBytes) {
      const why =
        this.records.size >= this.limits.maxPending
          ? `more than ${this.limits.maxPending} namespace calls are pending`
          : `the pending namespace calls hold more than ${Math.round(this.limits.maxPendingBytes / 1_048_576)} MB of arguments`;
      this.reject(origin, toWireError(new ValidationError(`${why}; await some calls before starting more`), `${ns}.${op}`));
      return;
    }
    // Object.assign, not `{ ...origin, id, ... }`: on Node 20 a spread followed by more properties takes V8's slow path (microseconds, every call).
    const record: CallRecord<T> = Object.assign(Object.assign({}, origin), { id: this.nextId++, ns, op, args, bytes, dropped: false });
    this.records.set(record.id, record);
    this.pendingBytes += bytes;
    this.waiting.push(record);
    this.pump();
  }

  /** Answer a call at once with an error, without dispatching it (asynchronously, like a reply). */
  reject(origin: CallOrigin<T>, error: WireError): void {
    soon(() => this.settle(origin, false, error));
  }

  /** Replies of these calls are ignored from now on (their run was stopped, or their sandbox replaced). */
  drop(which: (origin: CallOrigin<T>) => boolean): void {
    for (const record of this.records.values()) if (which(record)) record.dropped = true;
    // Waiting calls that nobody will hear back from need not run at all.
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const record = this.waiting[i] as CallRecord<T>;
      if (record.dropped) {
        this.waiting.splice(i, 1);
        this.finish(record);
      }
    }
  }

  /**
   * Fail the matching calls in the guest now with `error` (their replies, if any come, are
   * ignored): a guest stack suspended in one unwinds. Python mode stops an idle run this way.
   */
  interrupt(which: (origin: CallOrigin<T>) => boolean, error: WireError): void {
    const hit: CallOrigin<T>[] = [];
    for (const record of this.records.values()) if (!record.dropped && which(record)) hit.push({ target: record.target, guestId: record.guestId, run: record.run });
    this.drop(which);
    for (const origin of hit) this.reject(origin, error);
  }

  /** The provider's `send`: a reply to one of our calls. Never throws. */
  deliver(message: HostToGuest): void {
    if (message.type !== "reply") return;
    const record = this.records.get(message.callId);
    if (!record) return;
    this.running--;
    this.finish(record);
    this.pump();
    if (record.dropped) return;
    // The host's stack describes host internals (and paths): it never crosses.
    const value = message.ok ? message.value : { name: message.error.name, message: message.error.message, ...(message.error.details ? { details: message.error.details } : {}) };
    this.settle(record, message.ok, value);
  }

  private finish(record: CallRecord<T>): void {
    if (!this.records.delete(record.id)) return;
    this.pendingBytes -= record.bytes;
  }

  private pump(): void {
    const provider = this.provider;
    if (!provider) return;
    while (this.running < this.limits.maxConcurrent && this.waiting.length) {
      const record = this.waiting.shift() as CallRecord<T>;
      this.running++;
      // Arguments are released once dispatched; the record keeps only what routing needs.
      const args = record.args;
      record.args = [];
      const message: CallMessage = { type: "call", callId: record.id, ns: record.ns, op: record.op, args };
      // Dispatched after the current entry into the sandbox has returned: host code never runs
      // under the sandbox's watchdog, which could stop it halfway.
      if (this.inline) void provider.handle(message);
      else soon(() => void provider.handle(message));
    }
  }
}
