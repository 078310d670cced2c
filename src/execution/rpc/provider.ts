/**
 * RpcProvider: the one host-side answerer of namespace calls for every out-of-process executor.
 * Each call is dispatched to HostServices as soon as it arrives, so calls made with Promise.all
 * run in parallel; replies go back in completion order, matched by callId. A reply's bytes stay
 * counted toward the session's in-flight limit (HostServices.inFlight) until it has been sent.
 */
import type { CallContext } from "../../tools/protocol.js";
import type { HostServices } from "../host.js";
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

  async handle(message: CallMessage): Promise<void> {
    let reply: HostToGuest;
    let release = () => {};
    try {
      const args = Array.isArray(message.args) ? message.args : [];
      const held = await this.host.dispatchHeld(message.ns, message.op, args, this.callContext());
      release = held.release;
      reply = { type: "reply", callId: message.callId, ok: true, value: held.value };
    } catch (err) {
      reply = { type: "reply", callId: message.callId, ok: false, error: toWireError(err) };
    }
    try {
      this.deliver(reply);
    } finally {
      release();
    }
  }

  private deliver(reply: HostToGuest): void {
    try {
      this.send(reply);
    } catch (err) {
      if (reply.type === "reply" && reply.ok && isCloneError(err)) {
        // The value could not cross (should not happen: host results are plain data). Say so.
        this.deliver({ type: "reply", callId: reply.callId, ok: false, error: toWireError(err) });
      }
      // Otherwise the guest is gone; its executor reports that.
    }
  }
}

function isCloneError(err: unknown): boolean {
  return err instanceof Error && (err.name === "DataCloneError" || /could not be cloned/i.test(err.message));
}
