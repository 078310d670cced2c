/**
 * RpcClient: the guest side of namespace calls. Each call gets an id and a pending promise; the
 * host's replies settle them in whatever order they arrive. Runs inside the guest, so it imports
 * nothing from the host's layers.
 */
import type { WireError } from "../wire-error.js";
import type { GuestToHost, ReplyMessage } from "./protocol.js";

interface Pending {
  resolve(value: unknown): void;
  reject(error: WireError): void;
}

export class RpcClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly send: (message: GuestToHost) => void) {}

  readonly call = (ns: string, op: string, args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const callId = this.nextId++;
      try {
        this.send({ type: "call", callId, ns, op, args });
      } catch (err) {
        const detail = err instanceof Error ? err.message : String(err);
        reject({
          name: "ValidationError",
          message: `${ns}.${op}: arguments must be plain data (objects, arrays, strings, numbers, booleans, Uint8Array, Map, Date, ...); ${detail}`,
        } satisfies WireError);
        return;
      }
      this.pending.set(callId, { resolve, reject });
    });

  settle(reply: ReplyMessage): void {
    const p = this.pending.get(reply.callId);
    if (!p) return;
    this.pending.delete(reply.callId);
    if (reply.ok) p.resolve(reply.value);
    else p.reject(reply.error);
  }
}
