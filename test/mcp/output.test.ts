/** Fitting run output into the --max-output budget, and the run_code text and structured result. */
import { describe, expect, it } from "vitest";
import type { ExecutionResult } from "../../src/execution/protocol.js";
import { bounded, formatRunResult } from "../../src/mcp/format.js";
import { exactJson } from "../../src/mcp/json.js";
import { cutMiddle, fitSections, renderSections, waterFill } from "../../src/mcp/truncate.js";

function result(fields: Partial<ExecutionResult>): ExecutionResult {
  return { ok: true, value: undefined, display: "", stdout: "", stderr: "", error: null, durationMs: 1, ...fields };
}

describe("waterFill", () => {
  it("lets short items keep their length and splits the rest among the long ones", () => {
    expect(waterFill([10, 1000, 1000], 410)).toEqual([10, 200, 200]);
    expect(waterFill([5, 5], 100)).toEqual([5, 5]);
    expect(waterFill([300, 50, 300], 250)).toEqual([100, 50, 100]);
    expect(waterFill([], 100)).toEqual([]);
  });
});

describe("cutMiddle", () => {
  it("keeps the head and the tail around a marker naming the number of characters cut", () => {
    const text = `${"a".repeat(600)}${"b".repeat(400)}`;
    const cut = cutMiddle(text, 100);
    expect(cut.startsWith("a".repeat(60))).toBe(true);
    expect(cut.endsWith("b".repeat(40))).toBe(true);
    expect(cut).toContain("[… 900 characters cut …]");
  });

  it("never splits a surrogate pair", () => {
    const text = "😀".repeat(100);
    const cut = cutMiddle(text, 31);
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it("returns text that fits unchanged", () => {
    expect(cutMiddle("short", 10)).toBe("short");
  });
});

describe("fitSections", () => {
  it("keeps every section whole when the rendering fits", () => {
    const sections = [{ label: "stdout", text: "hi\n" }];
    expect(fitSections(sections, 100)).toEqual({ sections: [{ label: "stdout", text: "hi\n", cut: 0 }], cut: 0 });
  });

  it("stays within the limit and keeps a short error whole when stdout is huge", () => {
    const sections = [
      { label: "stdout", text: "x".repeat(100_000) },
      { label: "error", text: "Error: boom" },
    ];
    const fitted = fitSections(sections, 1000);
    expect(renderSections(fitted.sections).length).toBeLessThanOrEqual(1000);
    expect(fitted.sections[1]).toEqual({ label: "error", text: "Error: boom", cut: 0 });
    expect(fitted.cut).toBe(fitted.sections[0]!.cut);
    expect(fitted.sections[0]!.text).toContain(`[… ${fitted.cut.toLocaleString("en-US")} characters cut …]`);
  });
});

describe("formatRunResult", () => {
  it("labels the sections in the order value, stdout, stderr, error and leaves out empty ones", () => {
    const { text } = formatRunResult(result({ ok: false, stdout: "o\n", error: { name: "TypeError", message: "x is not a function" } }), 24_000);
    expect(text).toBe("--- stdout ---\no\n\n--- error ---\nTypeError: x is not a function");
  });

  it("does not repeat the error's first line when the stack starts with it", () => {
    const error = { name: "Error", message: "boom", stack: "Error: boom\n    at snippet.ts:1:7" };
    expect(formatRunResult(result({ ok: false, error }), 24_000).text).toBe("--- error ---\nError: boom\n    at snippet.ts:1:7");
  });

  it("puts the value in structured content only when JSON holds it exactly", () => {
    expect(formatRunResult(result({ value: { a: [1, "b", null] }, display: "x" }), 24_000).structured.value).toEqual({ a: [1, "b", null] });
    expect(formatRunResult(result({ value: new Map([[1, 2]]), display: "Map(1) { 1 => 2 }" }), 24_000).structured).not.toHaveProperty("value");
    expect(formatRunResult(result({ value: 10n, display: "10n" }), 24_000).structured).not.toHaveProperty("value");
  });

  it("bounds text and structured output by the limit and says how much was cut", () => {
    const { text, structured } = formatRunResult(result({ stdout: "y".repeat(30_000), stderr: "z".repeat(30_000), value: "v".repeat(30_000), display: "v".repeat(30_000) }), 5000);
    expect(text.length).toBeLessThanOrEqual(5000);
    expect(text).toMatch(/\[output cut to 5,000 characters \(--max-output\): [\d,]+ characters left out/);
    expect(structured.cutChars).toBeGreaterThan(80_000);
    expect(structured.stdout.length + structured.stderr.length + structured.display.length).toBeLessThanOrEqual(5000);
    expect(structured).not.toHaveProperty("value");
  });
});

describe("bounded and exactJson", () => {
  it("cuts other tools' text with a note", () => {
    const text = bounded("w".repeat(10_000), 1000);
    expect(text.length).toBeLessThanOrEqual(1000);
    const kept = (text.split("\n[text cut")[0]!.match(/w/g) ?? []).length;
    expect(text).toContain(`[… ${(10_000 - kept).toLocaleString("en-US")} characters cut …]`);
    expect(text).toContain("[text cut to 1,000 characters (--max-output); get what you need in run_code, a part at a time]");
  });

  it("accepts plain JSON and refuses what JSON would change", () => {
    expect(exactJson([1, { a: "b" }], 100)).toEqual([1, { a: "b" }]);
    expect(exactJson(new Date(0), 100)).toBeUndefined();
    expect(exactJson({ a: undefined }, 100)).toBeUndefined();
    expect(exactJson(Number.NaN, 100)).toBeUndefined();
    expect(exactJson("x".repeat(200), 100)).toBeUndefined();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(exactJson(cyclic, 100)).toBeUndefined();
  });
});
