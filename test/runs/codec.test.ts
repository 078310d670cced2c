/** The ledger codec's fast path for primitives writes exactly what the value codec writes, and reads it back. */
import { expect, test } from "vitest";
import { toWire } from "../../src/execution/remote/wire.js";
import { decodeValue, encodeValue } from "../../src/runs/codec.js";

test("primitives: the same text as toWire, the same value back; everything else goes through the codec", () => {
  const values: unknown[] = ["", "13\n", "\u2028 \"quoted\" \\ ", "x".repeat(2_000_000), 0, -0, 5, 1.5e300, -7, NaN, Infinity, -Infinity, true, false, null, undefined, ["a", 1], { o: 1 }, new Uint8Array([1, 2]), new Date(0), new Map([[1, 2]]), 10n];
  for (const v of values) {
    const fast = encodeValue(v);
    const wire = toWire(v, "data");
    expect(fast.json, String(v).slice(0, 20)).toBe(wire.json);
    expect(fast.buffers).toEqual(wire.buffers);
    expect(Object.is(decodeValue(fast), v) || JSON.stringify(toWire(decodeValue(fast), "data")) === JSON.stringify(wire)).toBe(true);
  }
});
