/**
 * The host's check of every message the child sends. The child runs the agent's code with Node's
 * full authority, so anything on the channel may be forged (`process.send` is in reach): each
 * message must have the protocol's shape and stay within MESSAGE_LIMITS, or the host treats the
 * child as broken and replaces it. What passes is still only data the run may produce anyway.
 */
import { z } from "zod";
import { lazy } from "../../lazy.js";
import type { GuestToHost } from "../rpc/protocol.js";
import { MESSAGE_LIMITS as L } from "./message-limits.js";
import { MAX_CHUNK_CHARS } from "../output-stream.js";

const id = lazy(() => z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER));

const wireError = lazy(() => z.object({
  name: z.string().max(L.errorName),
  message: z.string().max(L.errorMessage),
  stack: z.string().max(L.errorStack).optional(),
}));

const guestMessage = lazy(() => z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  z.object({
    type: z.literal("call"),
    callId: id,
    ns: z.string().max(L.ns),
    op: z.string().max(L.op),
    args: z.array(z.unknown()).max(L.args),
  }),
  z.object({
    type: z.literal("result"),
    runId: id,
    result: z.object({
      ok: z.boolean(),
      value: z.unknown(),
      display: z.string().max(L.display),
      stdout: z.string().max(L.stream),
      stderr: z.string().max(L.stream),
      error: wireError.nullable(),
      durationMs: z.number(),
    }),
  }),
  z.object({ type: z.literal("fatal"), error: wireError }),
  z.object({ type: z.literal("output"), runId: id, stream: z.enum(["stdout", "stderr"]), text: z.string().max(MAX_CHUNK_CHARS) }),
]));

export type CheckedMessage = { ok: true; message: GuestToHost } | { ok: false; problem: string };

/** The message with only the protocol's fields, or what is wrong with it (for the agent's error). */
export function checkGuestMessage(raw: unknown): CheckedMessage {
  const parsed = guestMessage.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data as GuestToHost };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.map(String).join(".") : "message";
  return { ok: false, problem: `${where}: ${issue?.message ?? "invalid"}` };
}
