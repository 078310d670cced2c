/**
 * The RPC protocol between the host and an out-of-process guest (child process today; sandbox and
 * container executors reuse it). It runs over a message channel that carries structured-clone
 * values — Node's IPC channel with `serialization: "advanced"` — so Map, Set, Date, BigInt and
 * typed arrays cross as themselves and bytes travel without base64. It never touches the guest's
 * stdout/stderr, which belong to the agent's output.
 *
 *   guest → host   { type: "ready" }                                  the guest can take runs
 *   host → guest   { type: "run", runId, script, timeoutMs, stream? }  script prepared on the host
 *   guest → host   { type: "output", runId, stream, text }             with `stream`: output while the run runs (batched)
 *   guest → host   { type: "call", callId, ns, op, args }               a namespace call; many may be in flight
 *   host → guest   { type: "reply", callId, ok: true, value }           ... answered in any order
 *                  { type: "reply", callId, ok: false, error }          error: WireError
 *   guest → host   { type: "result", runId, result, interrupted? }     ExecutionResult of the run
 *   guest → host   { type: "fatal", error }                            uncaught exception; the guest exits next
 *
 * A shared child (subprocess/shared-children.ts) holds several sessions, each in its own context:
 *
 *   host → guest   { type: "open", session, importBases }             a new session's context
 *   host → guest   { type: "close", session }                         forget that session's context
 *
 * and every run, stop, reply, call, output and result message then carries the `session` it
 * belongs to. A child of one session never sees `session`.
 *
 * A child of one session started before its session was known (the early child `import
 * "ts-code-mode"` starts, subprocess/node-child.ts) gets its import folders before its first run:
 *
 *   host → guest   { type: "open", importBases }                      (no session) its context imports from these
 */
import type { ExecutionResult } from "../protocol.js";
import type { WireError } from "../wire-error.js";

export interface ReadyMessage {
  type: "ready";
}
/** Set (to "1") in a shared child's environment: it starts with no session and opens one per OpenMessage. */
export const SHARED_CHILD_ENV = "TS_CODE_MODE_SHARED_CHILD";

/** Which session of a shared child a message belongs to; absent in a child of one session. */
interface SessionTagged {
  session?: number;
}
export interface RunMessage extends SessionTagged {
  type: "run";
  runId: number;
  script: string;
  timeoutMs: number;
  /** Send the run's output as it is produced (OutputMessage); only when the host listens. */
  stream?: boolean;
}
export interface OutputMessage extends SessionTagged {
  type: "output";
  runId: number;
  stream: "stdout" | "stderr";
  text: string;
}
export interface CallMessage extends SessionTagged {
  type: "call";
  callId: number;
  ns: string;
  op: string;
  args: unknown[];
}
export type ReplyMessage = ({ type: "reply"; callId: number; ok: true; value: unknown } | { type: "reply"; callId: number; ok: false; error: WireError }) & SessionTagged;
export interface ResultMessage extends SessionTagged {
  type: "result";
  runId: number;
  result: ExecutionResult;
  /**
   * The host's SIGINT stopped this run's script: the signal was taken by this run. A child.js
   * result without it, after the host sent SIGINT, means the signal is still on its way and would
   * end the process during a later run; the host replaces the child instead (issue 35).
   */
  interrupted?: true;
}
export interface FatalMessage {
  type: "fatal";
  error: WireError;
}

/**
 * Stop run `runId` (its deadline passed, or it was cancelled) if the guest is idle: a guest that
 * reads this message is waiting (on a tool, a timer, a promise), so it ends the run with
 * TimeoutError/CancelledError and keeps its variables. A busy guest never reads it; the host then
 * interrupts or replaces the process.
 */
export interface StopMessage extends SessionTagged {
  type: "stop";
  runId: number;
  reason: "timeout" | "cancel";
}
/**
 * A shared child: make a context for a new session, importing packages from `importBases` (in
 * order). Without `session`, to a child of one session before its first run: its one context
 * imports from `importBases` (it was started before they were known).
 */
export interface OpenMessage {
  type: "open";
  session?: number;
  importBases: string[];
}
/** A shared child: the session left (closed, reset); its context and timers go. */
export interface CloseMessage {
  type: "close";
  session: number;
}
export type HostToGuest = RunMessage | ReplyMessage | StopMessage | OpenMessage | CloseMessage;
export type GuestToHost = ReadyMessage | CallMessage | ResultMessage | FatalMessage | OutputMessage;

export function isGuestMessage(value: unknown): value is GuestToHost {
  const t = (value as { type?: unknown } | null)?.type;
  return t === "ready" || t === "call" || t === "result" || t === "fatal" || t === "output";
}

export function isHostMessage(value: unknown): value is HostToGuest {
  const t = (value as { type?: unknown } | null)?.type;
  return t === "run" || t === "reply" || t === "stop" || t === "open" || t === "close";
}
