/**
 * The bounded walk over guest values and what is built on it: display rendering, JSON encoding,
 * the words for a cut. The shapes are the ones that stalled the host before: a DAG of 2^40 paths
 * made of 41 arrays, a value 7 levels deep with 60 keys per level (all the same child), deep
 * nesting, wide objects, long strings, long keys, huge BigInts. Each test completes only because
 * the work is bounded; none measures time.
 */
import { describe, expect, it } from "vitest";
import { closestNames, didYouMean } from "../../src/errors.js";
import { BoundedCache } from "../../src/execution/bounded-cache.js";
import { MAX_DISPLAY_CHARS, renderDisplay } from "../../src/execution/result.js";
import { exactJson } from "../../src/mcp/json.js";
import { queryTokens } from "../../src/search/lexical.js";
import { assertJsonValue, encodeArtifact } from "../../src/storage/codec.js";
import { countPaths, formatCount } from "../../src/values/explain.js";
import { boundedJson } from "../../src/values/json.js";
import { walk } from "../../src/values/walk.js";

type Nested = unknown[] | { [k: string]: unknown };

/** 41 arrays, 2^40 paths: `a = [a, a]` forty times over `[1]`. */
function dag(levels = 40): Nested {
  let a: Nested = [1];
  for (let i = 0; i < levels; i++) a = [a, a];
  return a;
}

/** 7 levels, 60 keys each, every key the same child: util.inspect at depth 6 would render 60^6 values. */
function wideDeep(): Nested {
  let o: Nested = {};
  for (let level = 0; level < 7; level++) {
    const next: Record<string, unknown> = {};
    for (let k = 0; k < 60; k++) next[`k${k}`] = o;
    o = next;
  }
  return o;
}

function nested(depth: number): Nested {
  let v: Nested = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

const SMALL = { maxNodes: 1_000, maxDepth: 50, maxBytes: 10_000 };

describe("walk", () => {
  it("stops a DAG at the node budget, saying where, and that references are shared", () => {
    const report = walk(dag(), SMALL, { mode: "data" });
    expect(report.cut?.reason).toBe("nodes");
    expect(report.cut?.path).toMatch(/^\$(\[[01]\])+$/);
    expect(report.shared).toBe(true);
    expect(report.nodes).toBe(SMALL.maxNodes + 1);
  });

  it("stops deep nesting at the depth budget without recursion", () => {
    const report = walk(nested(200_000), { ...SMALL, maxNodes: 1_000_000 }, { mode: "json" });
    expect(report.cut?.reason).toBe("depth");
  });

  it("stops a wide object, a long string and a long key at the byte budget", () => {
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`key${i}`, i]));
    expect(walk(wide, { ...SMALL, maxNodes: 1_000_000 }, { mode: "json" }).cut?.reason).toBe("bytes");
    expect(walk({ s: "x".repeat(20_000) }, SMALL, { mode: "json" }).cut).toEqual({ reason: "bytes", path: "$.s" });
    expect(walk({ ["k".repeat(20_000)]: 1 }, SMALL, { mode: "json" }).cut?.reason).toBe("bytes");
    expect(walk({ ok: { ["k".repeat(2_000)]: 1 } }, SMALL, { mode: "data", maxKey: 1_024 }).longKey).toEqual({ path: expect.stringMatching(/^\$\.ok\.k+…$/), length: 2_000 });
  });

  it("data: small values measure the same on the quick path (under 32 values) as in the full walk, with or without a key limit", () => {
    // maxNodes below the quick path's 32 sends every value through the full walk.
    const full = { maxNodes: 31, maxDepth: 50, maxBytes: 10_000 };
    const values: unknown[] = ["noop", 3, true, null, undefined, ["noop", "ping", {}], ["noop", null, { a: "x", b: [1, 2, { c: false }] }], { k: { l: { m: { n: "deep" } } } }];
    for (const value of values) {
      for (const options of [{ mode: "data" as const }, { mode: "data" as const, maxKey: 1_024 }]) {
        const quick = walk(value, SMALL, options);
        expect(quick, JSON.stringify(value)).toEqual(walk(value, full, options));
      }
    }
  });

  it("json: names the first part JSON would not hold exactly", () => {
    expect(walk({ a: [1, { b: undefined }] }, SMALL, { mode: "json" }).problem).toEqual({ path: "$.a[1].b", text: "undefined" });
    // eslint-disable-next-line no-sparse-arrays -- a hole is the point
    expect(walk([1, , 2], SMALL, { mode: "json" }).problem?.text).toBe("an empty array slot");
    expect(walk({ when: new Date(0) }, SMALL, { mode: "json" }).problem).toEqual({ path: "$.when", text: "a Date" });
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    expect(walk(cyclic, SMALL, { mode: "json" }).problem).toEqual({ path: "$.self", text: "a circular reference" });
    expect(walk({ n: 10n }, SMALL, { mode: "json" }).problem?.text).toBe("a BigInt");
  });

  it("counts a value as it is when it fits", () => {
    const report = walk({ a: [1, 2], b: "xy" }, SMALL, { mode: "json" });
    expect(report).toMatchObject({ cut: null, problem: null, shared: false, nodes: 5 });
  });

  it("does not run getters or proxy traps in display mode", () => {
    let calls = 0;
    const value = {
      get g() {
        calls++;
        return 1;
      },
      p: new Proxy({}, { ownKeys: () => (calls++, []) }),
    };
    const report = walk(value, SMALL, { mode: "display" });
    expect(calls).toBe(0);
    expect(report.exotic).toBe(true);
  });
});

describe("counting paths", () => {
  it("counts the paths of a DAG without expanding it", () => {
    expect(countPaths(dag())).toBe(2 ** 40);
    expect(formatCount(2 ** 40)).toBe("2^40");
    expect(countPaths([1, [2, 3]])).toBe(3);
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(countPaths(cyclic)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("display (renderDisplay)", () => {
  it("renders ordinary values exactly as util.inspect does", () => {
    expect(renderDisplay({ a: 1, b: [1, 2] })).toBe("{ a: 1, b: [ 1, 2 ] }");
    expect(renderDisplay(new Map([["k", 1]]))).toBe("Map(1) { 'k' => 1 }");
    class Point {
      x = 1;
    }
    expect(renderDisplay([new Point(), new Date(0), /re/g])).toBe("[ Point { x: 1 }, 1970-01-01T00:00:00.000Z, /re/g ]");
  });

  it("cuts a value 7 deep and 60 wide made of shared references, and says why", () => {
    const text = renderDisplay(wideDeep());
    expect(text.length).toBeLessThanOrEqual(MAX_DISPLAY_CHARS + 200);
    expect(text).toMatch(/k0: \{/);
    expect(text).toMatch(/display cut: the value is more than 10,000 values \(2,799,360,000,000 paths through shared references/);
  });

  it("renders a DAG of 2^40 paths the way inspect's depth limit shows it", () => {
    const text = renderDisplay(dag());
    expect(text).toContain("[Array]");
    expect(text.length).toBeLessThan(MAX_DISPLAY_CHARS);
  });

  it("cuts wide objects, long keys and huge BigInts", () => {
    const wide = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`key${i}`, i]));
    const text = renderDisplay(wide);
    expect(text).toMatch(/key0: 0/);
    expect(text).toMatch(/display cut: the value is more than 10,000 values/);
    const longKey = renderDisplay({ ["k".repeat(5_000_000)]: 1 });
    expect(longKey.length).toBeLessThanOrEqual(MAX_DISPLAY_CHARS + 200);
    expect(longKey).toMatch(/display cut: the value is larger than 1,000,000 characters/);
    expect(renderDisplay({ big: 10n ** 100_000n })).toMatch(/^\{ big: \[BigInt of about 100,00\d digits\] \}$/);
    expect(renderDisplay(12n)).toBe("12n");
  });
});

describe("JSON (boundedJson, exactJson, artifact encoding)", () => {
  it("writes exact JSON within the limits", () => {
    expect(boundedJson({ a: [1, "b", null] }, SMALL)).toEqual({ ok: true, text: '{"a":[1,"b",null]}' });
    expect(boundedJson({ a: 1 }, SMALL, 2)).toEqual({ ok: true, text: '{\n  "a": 1\n}' });
  });

  it("refuses a DAG of 2^40 paths with the reason, instead of expanding it", () => {
    const out = boundedJson(dag(), { maxNodes: 1_000_000, maxDepth: 1_000, maxBytes: 1_000_000 });
    expect(out.ok).toBe(false);
    expect(!out.ok && out.reason).toMatch(/2\^40 paths through shared references/);
    expect(exactJson(dag(), 100_000)).toBeUndefined();
  });

  it("artifact encoding refuses a DAG, a deep value and a huge value with a ValidationError", () => {
    expect(() => encodeArtifact(dag())).toThrow(/Artifact data is too large or too deep to store as JSON: it is more than 2,000,000 values \(2\^40 paths/);
    expect(() => encodeArtifact(nested(100_000))).toThrow(/nested more than 1,000 levels deep/);
    expect(() => assertJsonValue({ meta: dag() }, "Artifact metadata")).toThrow(expect.objectContaining({ name: "ValidationError" }));
    expect(new TextDecoder().decode(encodeArtifact({ a: [1, 2] }).bytes)).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}');
  });
});

describe("names and queries", () => {
  it("did-you-mean hints cost bounded work for a 30,000,000-character name", () => {
    const huge = "x".repeat(30_000_000);
    expect(closestNames(huge, ["echo", "x".repeat(10)])).toEqual([]);
    expect(didYouMean(huge, ["echo"])).toBe("");
    expect(closestNames("ehco", ["echo", "wc", "y".repeat(1_000_000)])).toEqual(["echo"]);
  });

  it("a search query is cut to bounded tokens", () => {
    const tokens = queryTokens(`${"count ".repeat(10_000)}${"z".repeat(30_000_000)}`);
    expect(tokens.length).toBeLessThanOrEqual(64);
    expect(queryTokens("z".repeat(1_000_000))[0]?.length).toBeLessThanOrEqual(64);
  });
});

describe("BoundedCache", () => {
  it("is bounded in entries and in size, forgetting the oldest first", () => {
    const cache = new BoundedCache<string, string>(3, 10, (k, v) => k.length + v.length);
    cache.set("a", "1");
    cache.set("b", "2");
    cache.set("c", "3");
    cache.set("d", "4");
    expect(cache.has("a")).toBe(false);
    expect(cache.size).toBe(3);
    cache.set("e", "12345678");
    expect([cache.has("c"), cache.has("d"), cache.has("e")]).toEqual([false, false, true]);
    expect(cache.weight).toBeLessThanOrEqual(10);
    cache.set("f", "x".repeat(100));
    expect(cache.has("f")).toBe(false);
    cache.clear();
    expect([cache.size, cache.weight]).toEqual([0, 0]);
  });
});
