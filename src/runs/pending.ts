/** A paused run's pending calls, as the pause reports them and as GET /runs/{id} and `runs show` list them. */
import { decodeValue } from "./codec.js";
import { pendingId } from "./recorder.js";
import type { PendingCall } from "../execution/protocol.js";
import type { LedgerEntry } from "../storage/runs.js";

/** A paused run's calls that wait for a decision, as the pause reported them. */
export function pendingCalls(entries: readonly LedgerEntry[]): PendingCall[] {
  return entries.filter((e) => e.state === "pending").map(toPendingCall);
}

export function toPendingCall(e: LedgerEntry): PendingCall {
  const args = decodeValue(e.args) as unknown[];
  if (e.ns === "tools" && e.op === "call") {
    return { id: pendingId(e.seq), tool: String(args[0]), callable: typeof args[1] === "string" ? args[1] : null, args: args[2] ?? {}, reason: e.reason ?? "" };
  }
  return { id: pendingId(e.seq), tool: `${e.ns}.${e.op}`, callable: null, args, reason: e.reason ?? "" };
}

