/** JSON safety of `--json` output: what JSON.stringify would keep exactly, and nothing else. */
import { describe, expect, it } from "vitest";
import { isJsonRepresentable } from "../../src/cli/shared.js";

describe("isJsonRepresentable", () => {
  it("accepts JSON values, including shared (non-cyclic) references", () => {
    const shared = { x: 1 };
    for (const v of [null, true, "s", 0, -1.5, [], {}, [1, "a", null, { b: [false] }], { a: shared, b: shared }, Object.create(null) as object]) {
      expect(isJsonRepresentable(v), JSON.stringify(v)).toBe(true);
    }
  });

  it("rejects what JSON would drop, mangle or throw on", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const bad: unknown[] = [
      undefined,
      Number.NaN,
      Infinity,
      1n,
      new Map([[1, 2]]),
      new Set([1]),
      new Uint8Array([1]),
      new Date(0),
      /x/,
      { a: undefined },
      // eslint-disable-next-line no-sparse-arrays -- a hole is exactly what JSON would turn into null
      [1, , 3],
      { [Symbol("s")]: 1 },
      cyclic,
      () => 1,
      [{ deep: new Map() }],
    ];
    for (const v of bad) expect(isJsonRepresentable(v)).toBe(false);
  });
});
