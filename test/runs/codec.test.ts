/** The ledger codec's fast path for primitives writes exactly what the value codec writes, and reads it back. */
import { describe, expect, it, test } from "vitest";
import { toWire } from "../../src/execution/remote/wire.js";
import { decodeValue, encodeValue } from "../../src/runs/codec.js";
import { isoAt } from "../../src/runs/recorder.js";

test("primitives: the same text as toWire, the same value back; everything else goes through the codec", () => {
  const values: unknown[] = ["", "13\n", "\ud800x", "\u0007", "😀", "\u2028 \"quoted\" \\ ", "x".repeat(2_000_000), 0, -0, 5, 1.5e300, -7, NaN, Infinity, -Infinity, true, false, null, undefined, ["a", 1], { o: 1 }, new Uint8Array([1, 2]), new Date(0), new Map([[1, 2]]), 10n];
  for (const v of values) {
    const fast = encodeValue(v);
    const wire = toWire(v, "data");
    expect(fast.json, String(v).slice(0, 20)).toBe(wire.json);
    expect(fast.buffers).toEqual(wire.buffers);
    expect(Object.is(decodeValue(fast), v) || JSON.stringify(toWire(decodeValue(fast), "data")) === JSON.stringify(wire)).toBe(true);
  }
});

test("plain trees (a call's arguments): the same text as toWire; anything the fast path does not take still matches", () => {
  const shared = { s: 1 };
  const cycle: Record<string, unknown> = { a: 1 };
  cycle["self"] = cycle;
  const deep: unknown[] = [];
  let at = deep;
  for (let i = 0; i < 40; i++) at.push((at = []));
  const values: unknown[] = [
    ["wc", "lines", { path: "a.txt" }],
    ["noop", "ping", undefined],
    ["t", null, { a: [1, "x", true, null, undefined, { b: { c: [] } }], "": "", "k\u2028": "v\"" }],
    Object.assign(Object.create(null) as object, { n: 1 }),
    Object.assign(new Array<unknown>(3), { 0: 1, 2: 3 }),
    [shared, shared],
    // An object met again after a few others (the walk's short list) and after many (its Set).
    [{ a: 1 }, { b: 2 }, shared, { c: 3 }, shared],
    (() => {
      const many = Array.from({ length: 12 }, (_, i) => ({ i }));
      return [...many, many[2]];
    })(),
    Array.from({ length: 12 }, (_, i) => ({ i })),
    cycle,
    deep,
    [NaN, -0, Infinity],
    [{ d: new Date(5) }],
    [new Uint8Array([1])],
    [new Map([["a", 1]])],
    [new (class Point { x = 1 })()],
    Array.from({ length: 5_000 }, (_, i) => i),
    ["y".repeat(600_000), "z".repeat(600_000)],
    { [Symbol("s")]: 1, kept: 2 },
    // Strings the fast path writes itself unless JSON must escape them: lone and paired surrogates, control characters, quotes.
    ["\ud800", "a\udc00b", "😀", "\u0001\u001f", 'q"\\', "\u007f\u2029", `${"long ".repeat(60)}"`, "plain ".repeat(60)],
    { "\ud83d": 1, "tab\tkey": "x", [`${"k".repeat(300)}"`]: 2 },
    [1e21, 1e-7, -1.5, 2 ** 53, Number.MAX_VALUE, Number.MIN_VALUE, 0.1 + 0.2],
  ];
  for (const v of values) {
    const fast = encodeValue(v);
    const wire = toWire(v, "data");
    expect(fast.json, JSON.stringify(wire.json.slice(0, 60))).toBe(wire.json);
    expect(fast.buffers).toEqual(wire.buffers);
  }
});

describe("the ledger's timestamps", () => {
  it("isoAt formats as toISOString, across milliseconds, seconds and days, in any order", () => {
    const start = Date.UTC(2026, 10, 27, 23, 59, 58, 990);
    const times = [...Array.from({ length: 3_000 }, (_, i) => start + i), start + 5, start - 86_400_001, start + 999, start];
    for (const ms of times) expect(isoAt(ms)).toBe(new Date(ms).toISOString());
  });
});
