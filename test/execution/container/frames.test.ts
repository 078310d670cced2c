/**
 * The framing of the host↔container socket: what a hostile guest can send is bounded before it is
 * buffered, and real messages survive any split into chunks.
 */
import { describe, expect, it } from "vitest";
import { encodeFrame, FrameReader } from "../../../src/execution/container/frames.js";

function reader(max: number) {
  const messages: unknown[] = [];
  const errors: string[] = [];
  const r = new FrameReader(max, (m) => messages.push(m), (p) => errors.push(p));
  return { r, messages, errors };
}

describe("FrameReader", () => {
  it("decodes messages split at every byte, with the values the IPC channel carries (Map, bytes, BigInt)", () => {
    const message = { type: "call", args: [new Map([["a", 1n]]), new Uint8Array([1, 2, 3]), "x".repeat(1_000)] };
    const bytes = Buffer.concat([encodeFrame(message), encodeFrame({ type: "ready" })]);
    const { r, messages, errors } = reader(1_000_000);
    for (let i = 0; i < bytes.length; i++) r.push(bytes.subarray(i, i + 1));
    expect(errors).toEqual([]);
    expect(messages).toEqual([message, { type: "ready" }]);
  });

  it("a frame announcing more than the limit is refused from its header, before its body is buffered", () => {
    const { r, messages, errors } = reader(1_024);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(4_000_000_000, 0);
    r.push(head);
    expect(errors).toEqual(["a message of 4000000000 bytes is over the limit of 1024"]);
    // Nothing more is read after a violation.
    r.push(encodeFrame({ type: "ready" }));
    expect(messages).toEqual([]);
  });

  it("bytes that are not a serialized value are a violation, not a crash", () => {
    const { r, errors } = reader(1_024);
    const body = Buffer.from([0xff, 0x0f, 0x99, 0x99]);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length, 0);
    r.push(Buffer.concat([head, body]));
    expect(errors[0]).toMatch(/a message could not be read/);
  });
});
