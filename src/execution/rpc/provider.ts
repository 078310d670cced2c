/**
 * RpcProvider: the one host-side answerer of namespace calls for every out-of-process executor.
 * Each call is dispatched to HostServices as soon as it arrives, so calls made with Promise.all
 * run in parallel; replies go back in completion order, matched by callId. A reply's bytes stay
 * counted toward the session's in-flight limit (HostServices.inFlight) until it has been sent.
 */
import type { CallContext } from "../../tools/protocol.js";
import { messagePrefix, type HostServices } from "../host.js";
import { CALL_ARGS_LIMITS } from "../../values/limits.js";
import { describeCut } from "../../values/explain.js";
import { walk } from "../../values/walk.js";
import { toWireError } from "../wire-error.js";
import type { CallMessage, HostToGuest } from "./protocol.js";

export class RpcProvider {
  constructor(
    private readonly host: HostServices,
    /** Sends to the guest; may throw when the channel is gone (the guest died), which is ignored. */
    private readonly send: (message: HostToGuest) => void,
    /** Bounds of the run in progress (time left, abort signal): see RunBudget. */
    private readonly callContext: () => CallContext,
  ) {}

  /**
   * Answers `message`; settles once the reply is sent (or could not be). A chain of two `then`s
   * rather than an async function with an await: every promise of a tool call's path costs twice
   * once the write deadline's AsyncLocalStorage has turned on Node's promise hooks
   * (storage/write-deadline.ts), and this is on the path of every call of every out-of-process executor.
   */
  handle(message: CallMessage, done?: () => void): Promise<void> {
    let held: Promise<{ value: unknown; release: () => void }>;
    try {
      held = this.host.dispatchHeld(message.ns, message.op, Array.isArray(message.args) ? message.args : [], this.callContext());
    } catch (err) {
      held = Promise.reject(err);
    }
    // `done` (the caller's count of calls in flight) is called here, once the reply is sent,
    // rather than by a `then` of the caller's on the returned promise: one promise fewer a call.
    return held.then(
      ({ value, release }) => {
        try {
          this.deliver({ type: "reply", callId: message.callId, ok: true, value }, message);
        } finally {
          release();
          done?.();
        }
      },
      (err: unknown) => {
        try {
          this.deliver({ type: "reply", callId: message.callId, ok: false, error: toWireError(err) }, message);
        } finally {
          done?.();
        }
      },
    );
  }

  private deliver(reply: HostToGuest, call: CallMessage): void {
    try {
      this.send(reply);
    } catch (err) {
      // The value could not cross: a tool returned something the channel's serializer refuses (a
      // function) or cannot walk (2,000,000 levels deep overflows its recursion). Answer the call
      // with that at once, or the guest would wait out its whole timeout. If the guest is gone, this
      // send fails too and is ignored: its executor reports that.
      if (reply.type === "reply" && reply.ok) {
        const label = messagePrefix(call.ns, call.op, Array.isArray(call.args) ? call.args : []);
        this.deliver({ type: "reply", callId: reply.callId, ok: false, error: toWireError(unsendable(reply.value, err), label) }, call);
      }
    }
  }
}

/** Why a reply's value cannot be sent, in the sandbox boundary's words (a DataCloneError). */
function unsendable(value: unknown, err: unknown): Error {
  const report = walk(value, CALL_ARGS_LIMITS, { mode: "data" });
  const why = report.cut ? `it is ${describeCut(value, report, CALL_ARGS_LIMITS)}` : err instanceof Error ? err.message : String(err);
  const e = new Error(`the result could not be sent to the code: ${why}; return a smaller, flatter value (plain data)`);
  e.name = "DataCloneError";
  return e;
}
