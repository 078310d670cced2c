/**
 * The host's hand-written check of the child's messages (src/execution/subprocess/messages.ts)
 * against the protocol written as a zod schema (the form it had before; kept here as the
 * reference): both must accept and refuse the same messages, and what passes keeps only the
 * protocol's fields.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkGuestMessage } from "../../src/execution/subprocess/messages.js";
import { MESSAGE_LIMITS as L } from "../../src/execution/subprocess/message-limits.js";
import { MAX_CHUNK_CHARS } from "../../src/execution/output-stream.js";

const id = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const wireError = z.object({ name: z.string().max(L.errorName), message: z.string().max(L.errorMessage), stack: z.string().max(L.errorStack).optional() });
const reference = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  z.object({ type: z.literal("call"), callId: id, ns: z.string().max(L.ns), op: z.string().max(L.op), args: z.array(z.unknown()).max(L.args), session: id.optional() }),
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
    interrupted: z.literal(true).optional(),
    session: id.optional(),
  }),
  z.object({ type: z.literal("fatal"), error: wireError }),
  z.object({ type: z.literal("output"), runId: id, stream: z.enum(["stdout", "stderr"]), text: z.string().max(MAX_CHUNK_CHARS), session: id.optional() }),
]);

const err = { name: "Error", message: "m", stack: "s" };
const valid: Record<string, unknown>[] = [
  { type: "ready" },
  { type: "call", callId: 1, ns: "tools", op: "call", args: [{ a: 1 }, new Map([[1, 2]])] },
  { type: "result", runId: 3, result: { ok: true, value: new Uint8Array(2), display: "2", stdout: "", stderr: "", error: null, durationMs: 0.5 } },
  { type: "result", runId: 3, result: { ok: false, value: undefined, display: "", stdout: "o", stderr: "e", error: err, durationMs: 1 } },
  { type: "result", runId: 4, result: { ok: false, value: undefined, display: "", stdout: "", stderr: "", error: err, durationMs: 1 }, interrupted: true },
  { type: "fatal", error: { name: "Error", message: "boom" } },
  { type: "output", runId: 0, stream: "stderr", text: "x" },
  // A shared child's messages name their session (rpc/protocol.ts).
  { type: "call", callId: 2, ns: "tools", op: "list", args: [], session: 5 },
  { type: "result", runId: 5, result: { ok: true, value: 1, display: "1", stdout: "", stderr: "", error: null, durationMs: 1 }, session: 0 },
  { type: "output", runId: 1, stream: "stdout", text: "y", session: 9 },
];

/** Values that break a field: wrong types, bounds, non-finite and fractional numbers, too-long strings. */
const breakers: unknown[] = [undefined, null, "1", -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, true, [], {}, "x".repeat(1_000_001), "stdin"];

/** Every message with one field (at any depth) replaced by each breaker, or removed. */
function variants(message: Record<string, unknown>): unknown[] {
  const out: unknown[] = [];
  const walk = (obj: Record<string, unknown>, rebuild: (o: Record<string, unknown>) => unknown) => {
    for (const key of Object.keys(obj)) {
      const { [key]: _, ...without } = obj;
      out.push(rebuild(without));
      for (const b of breakers) out.push(rebuild({ ...obj, [key]: b }));
      const v = obj[key];
      if (typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Map) && !ArrayBuffer.isView(v)) walk(v as Record<string, unknown>, (inner) => rebuild({ ...obj, [key]: inner }));
    }
    out.push(rebuild({ ...obj, extra: "dropped" }));
  };
  walk(message, (o) => o);
  return out;
}

describe("checkGuestMessage", () => {
  it("accepts and refuses exactly what the protocol's schema does, field by field", () => {
    const cases = [...valid, ...valid.flatMap(variants), null, 7, "ready", [], { type: "run" }, { type: "call", callId: 1, ns: "t", op: "o", args: new Array(L.args + 1).fill(0) }];
    let accepted = 0;
    for (const raw of cases) {
      const ours = checkGuestMessage(raw);
      const ref = reference.safeParse(raw);
      expect({ raw, ok: ours.ok }).toEqual({ raw, ok: ref.success });
      if (ours.ok && ref.success) {
        accepted++;
        expect(ours.message).toEqual(ref.data);
        expect(ours.message).not.toHaveProperty("extra");
      }
    }
    expect(accepted).toBeGreaterThan(valid.length);
  });

  it("names the field that is wrong", () => {
    const r = checkGuestMessage({ type: "result", runId: 1, result: { ok: true, value: 1, display: "x".repeat(L.display + 1), stdout: "", stderr: "", error: null, durationMs: 0 } });
    expect(r).toEqual({ ok: false, problem: expect.stringMatching(/^result\.display: /) });
    expect(checkGuestMessage({ type: "call", callId: -1, ns: "x", op: "y", args: [] })).toEqual({ ok: false, problem: expect.stringMatching(/^callId: /) });
  });
});
