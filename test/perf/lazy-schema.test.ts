/**
 * `lazy()` (src/lazy.ts) stands in for module-level zod schemas and option shapes so importing the
 * package builds none of them: it builds on first use, once, and behaves as the built value in every
 * way the code base uses one (parse, nesting in another schema, spreading a shape, instanceof,
 * JSON Schema output).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { lazy } from "../../src/lazy.js";
import { z as zodOnFirstUse } from "../../src/zod-on-first-use.js";

describe("lazy()", () => {
  it("builds on first use, once", () => {
    let builds = 0;
    const schema = lazy(() => (builds++, z.object({ n: z.number() })));
    expect(builds).toBe(0);
    expect(schema.parse({ n: 1 })).toEqual({ n: 1 });
    expect(schema.safeParse({ n: "x" }).success).toBe(false);
    expect(builds).toBe(1);
  });

  it("nests, extends, spreads as a shape, and answers instanceof like the schema", () => {
    const inner = lazy(() => z.string().min(2));
    const shape = lazy(() => ({ name: inner, age: z.number().optional() }));
    const outer = z.strictObject({ ...shape, tag: inner.optional() });
    expect(Object.keys(shape)).toEqual(["name", "age"]);
    expect(outer.parse({ name: "ab", tag: "cd" })).toEqual({ name: "ab", tag: "cd" });
    expect(() => outer.parse({ name: "a" })).toThrow(z.ZodError);
    expect(inner instanceof z.ZodString).toBe(true);
    const extended = lazy(() => z.object({ a: z.number() })).extend({ b: inner });
    expect(extended.parse({ a: 1, b: "xy" })).toEqual({ a: 1, b: "xy" });
  });

  it("gives the same JSON Schema as the schema it stands for", () => {
    const build = () => z.object({ q: z.string().describe("the query"), limit: z.number().int().optional() });
    expect(z.toJSONSchema(z.object({ inner: lazy(build) }))).toEqual(z.toJSONSchema(z.object({ inner: build() })));
  });

  it("the bundle's zod, loaded on first use, is the zod `import \"zod\"` gives (one registry, one ZodError)", () => {
    expect(zodOnFirstUse.object).toBe(z.object);
    expect(zodOnFirstUse.ZodError).toBe(z.ZodError);
    expect(zodOnFirstUse.globalRegistry).toBe(z.globalRegistry);
  });
});
