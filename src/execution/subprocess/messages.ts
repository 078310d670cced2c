/**
 * The host's check of every message the child sends. The child runs the agent's code with Node's
 * full authority, so anything on the channel may be forged (`process.send` is in reach): each
 * message must have the protocol's shape and stay within MESSAGE_LIMITS, or the host treats the
 * child as broken and replaces it. What passes is still only data the run may produce anyway.
 *
 * Written out by hand rather than with zod: every run and every tool call passes here, and the
 * zod union cost more than the rest of the host's work on a tool call (profiled; test/execution/
 * guest-messages.test.ts holds the zod schema as the reference and checks both agree). Like
 * zod's z.object, a passing message is copied with only the protocol's fields.
 */
import type { CallMessage, GuestToHost, OutputMessage, ResultMessage } from "../rpc/protocol.js";
import type { WireError } from "../wire-error.js";
import type { ExecutionResult } from "../protocol.js";
import { MESSAGE_LIMITS as L } from "./message-limits.js";
import { MAX_CHUNK_CHARS } from "../output-stream.js";

export type CheckedMessage = { ok: true; message: GuestToHost } | { ok: false; problem: string };

/** A field that is not what the protocol says: where it is and what was expected. */
class Bad {
  constructor(
    readonly where: string,
    readonly what: string,
  ) {}
}

type Fields = Record<string, unknown>;

function record(value: unknown, where: string): Fields {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Bad(where, "expected an object");
  return value as Fields;
}

function id(value: unknown, where: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new Bad(where, "expected a whole number from 0 to 2^53 - 1");
  return value;
}

function text(value: unknown, where: string, max: number): string {
  if (typeof value !== "string") throw new Bad(where, "expected a string");
  if (value.length > max) throw new Bad(where, `a string of at most ${max} characters`);
  return value;
}

function wireError(value: unknown, where: string): WireError {
  const e = record(value, where);
  const out: WireError = { name: text(e["name"], `${where}.name`, L.errorName), message: text(e["message"], `${where}.message`, L.errorMessage) };
  if (e["stack"] !== undefined) out.stack = text(e["stack"], `${where}.stack`, L.errorStack);
  return out;
}

function result(value: unknown): ExecutionResult {
  const r = record(value, "result");
  if (typeof r["ok"] !== "boolean") throw new Bad("result.ok", "expected a boolean");
  // Present even when undefined (a statement's result): the child always sends it.
  if (!("value" in r)) throw new Bad("result.value", "expected the key (its value may be undefined)");
  const durationMs = r["durationMs"];
  if (typeof durationMs !== "number" || !Number.isFinite(durationMs)) throw new Bad("result.durationMs", "expected a finite number");
  return {
    ok: r["ok"],
    value: r["value"],
    display: text(r["display"], "result.display", L.display),
    stdout: text(r["stdout"], "result.stdout", L.stream),
    stderr: text(r["stderr"], "result.stderr", L.stream),
    error: r["error"] === null ? null : wireError(r["error"], "result.error"),
    durationMs,
  };
}

/**
 * `out` with a shared child's session tag (rpc/protocol.ts) copied, only when present. Set on the
 * copy, not spread into its literal: on Node 20 a spread literal followed by more properties
 * takes V8's slow path, and every tool call's message passes here.
 */
function withSession<T extends { session?: number }>(out: T, m: Fields): T {
  if (m["session"] !== undefined) out.session = id(m["session"], "session");
  return out;
}

function parse(raw: unknown): GuestToHost {
  const m = record(raw, "message");
  switch (m["type"]) {
    case "call": {
      const args = m["args"];
      if (!Array.isArray(args)) throw new Bad("args", "expected an array");
      if (args.length > L.args) throw new Bad("args", `an array of at most ${L.args} items`);
      return withSession<CallMessage>({ type: "call", callId: id(m["callId"], "callId"), ns: text(m["ns"], "ns", L.ns), op: text(m["op"], "op", L.op), args }, m);
    }
    case "result": {
      const interrupted = m["interrupted"];
      if (interrupted !== undefined && interrupted !== true) throw new Bad("interrupted", "expected true or no field");
      const out: ResultMessage = { type: "result", runId: id(m["runId"], "runId"), result: result(m["result"]) };
      if (interrupted) out.interrupted = interrupted;
      return withSession(out, m);
    }
    case "output": {
      const stream = m["stream"];
      if (stream !== "stdout" && stream !== "stderr") throw new Bad("stream", 'expected "stdout" or "stderr"');
      return withSession<OutputMessage>({ type: "output", runId: id(m["runId"], "runId"), stream, text: text(m["text"], "text", MAX_CHUNK_CHARS) }, m);
    }
    case "ready":
      return { type: "ready" };
    case "fatal":
      return { type: "fatal", error: wireError(m["error"], "error") };
    default:
      throw new Bad("type", 'expected one of "ready", "call", "result", "fatal", "output"');
  }
}

/** The message with only the protocol's fields, or what is wrong with it (for the agent's error). */
export function checkGuestMessage(raw: unknown): CheckedMessage {
  try {
    return { ok: true, message: parse(raw) };
  } catch (err) {
    if (err instanceof Bad) return { ok: false, problem: `${err.where}: ${err.what}` };
    return { ok: false, problem: `message: ${err instanceof Error ? err.message : String(err)}` };
  }
}
