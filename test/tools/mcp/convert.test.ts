/**
 * The pure translations of the MCP adapter: JSON Schema → ParamSpec / TypeScript type text, and a
 * tools/call result → the agent's value or a ToolError.
 */
import { describe, expect, it } from "vitest";
import { ToolError } from "../../../src/errors.js";
import { paramsFromInputSchema, typeTextFromSchema } from "../../../src/tools/adapters/mcp/json-schema.js";
import { errorCodeFromText, redact, resultError, unwrapResult } from "../../../src/tools/adapters/mcp/result.js";
import { validateArgs } from "../../../src/tools/validate.js";
import { typeErrors } from "./helpers.js";

describe("paramsFromInputSchema", () => {
  it("maps types, descriptions, defaults, enums, arrays and nested objects", () => {
    const params = paramsFromInputSchema({
      type: "object",
      properties: {
        message: { type: "string", description: "What to echo" },
        count: { type: "integer", default: 1 },
        ratio: { type: "number", title: "A ratio" },
        loud: { type: "boolean" },
        mode: { type: "string", enum: ["a", "b"] },
        tags: { type: "array", items: { type: "string" } },
        options: { type: "object", properties: { depth: { type: "integer" }, label: { type: "string" } }, required: ["depth"] },
        anything: {},
      },
      required: ["message", "count", "options"],
    });
    expect(params).toEqual([
      { name: "message", type: "string", required: true, description: "What to echo" },
      { name: "count", type: "integer", required: false, default: 1 },
      { name: "ratio", type: "number", required: false, description: "A ratio" },
      { name: "loud", type: "boolean", required: false },
      { name: "mode", type: "string", required: false, enum: ["a", "b"] },
      { name: "tags", type: "array", required: false, items: "string" },
      {
        name: "options",
        type: "object",
        required: true,
        properties: [
          { name: "depth", type: "integer", required: true },
          { name: "label", type: "string", required: false },
        ],
      },
      { name: "anything", type: "unknown", required: false },
    ]);
  });

  it("follows local $refs, unwraps nullable unions and infers a type from an enum", () => {
    const params = paramsFromInputSchema({
      type: "object",
      $defs: { Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } },
      properties: {
        at: { $ref: "#/$defs/Point", description: "Where" },
        maybe: { anyOf: [{ type: "string" }, { type: "null" }] },
        typed: { type: ["integer", "null"] },
        level: { enum: [1, 2, 3] },
        either: { anyOf: [{ type: "string" }, { type: "number" }] },
        loop: { $ref: "#/properties/loop" },
      },
    });
    expect(params.find((p) => p.name === "at")).toEqual({ name: "at", type: "object", required: false, description: "Where", properties: [{ name: "x", type: "number", required: true }] });
    expect(params.find((p) => p.name === "maybe")?.type).toBe("string");
    expect(params.find((p) => p.name === "typed")?.type).toBe("integer");
    expect(params.find((p) => p.name === "level")).toMatchObject({ type: "integer", enum: [1, 2, 3] });
    expect(params.find((p) => p.name === "either")?.type).toBe("unknown");
    expect(params.find((p) => p.name === "loop")?.type).toBe("unknown");
  });

  it("gives no params for a missing or empty schema", () => {
    expect(paramsFromInputSchema(undefined)).toEqual([]);
    expect(paramsFromInputSchema({ type: "object" })).toEqual([]);
  });

  it("produces specs that validateArgs enforces (wrong type, missing, nested)", () => {
    const info = {
      name: "echo_json",
      description: "",
      returns: "unknown",
      params: paramsFromInputSchema({
        type: "object",
        properties: { message: { type: "string" }, options: { type: "object", properties: { depth: { type: "integer" } }, required: ["depth"] } },
        required: ["message"],
      }),
    };
    expect(() => validateArgs("t", "echo_json", info, { message: 1 })).toThrow(/'message' expected string, got number 1/);
    expect(() => validateArgs("t", "echo_json", info, {})).toThrow(/Missing required argument 'message'/);
    expect(() => validateArgs("t", "echo_json", info, { message: "m", options: {} })).toThrow(/'options\.depth' is required/);
    expect(validateArgs("t", "echo_json", info, { message: "m", options: { depth: 2 } })).toEqual({ message: "m", options: { depth: 2 } });
  });
});

describe("typeTextFromSchema", () => {
  it("renders objects, optional keys, arrays, unions, enums and nullability", () => {
    expect(typeTextFromSchema(undefined)).toBe("unknown");
    expect(typeTextFromSchema({ type: "object", properties: { sum: { type: "number" } }, required: ["sum"] })).toBe("{ sum: number }");
    expect(
      typeTextFromSchema({
        type: "object",
        properties: {
          "max-results": { type: "integer" },
          tags: { type: "array", items: { type: "string" } },
          points: { type: "array", items: { type: "object", properties: { x: { type: "number" } } } },
          state: { enum: ["on", "off"] },
          note: { type: ["string", "null"] },
          maybe: { anyOf: [{ type: "number" }, { type: "null" }] },
          map: { type: "object", additionalProperties: { type: "boolean" } },
        },
        required: ["tags"],
      }),
    ).toBe(
      '{ "max-results"?: number; tags: string[]; points?: Array<{ x?: number }>; state?: "on" | "off"; note?: string | null; maybe?: number | null; map?: Record<string, boolean> }',
    );
  });

  it("always produces a type that compiles", () => {
    const schemas: unknown[] = [
      { type: "object", properties: { a: { $ref: "#" } } },
      { allOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "object", properties: { b: { type: "number" } } }] },
      { type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } },
      { const: { nested: [1, "x", null] } },
      true,
      { type: "object", properties: { 'we"ird key': { type: "string" } } },
    ];
    const code = schemas.map((s, i) => `type T${i} = ${typeTextFromSchema(s)};`).join("\n");
    expect(typeErrors(code)).toEqual([]);
  });
});

describe("unwrapResult", () => {
  it("prefers structuredContent", () => {
    expect(unwrapResult({ content: [{ type: "text", text: "ignored" }], structuredContent: { sum: 5 } })).toEqual({ sum: 5 });
  });

  it("parses text that is a JSON object or array, and keeps other text as text", () => {
    expect(unwrapResult({ content: [{ type: "text", text: ' {"a":[1,2]} ' }] })).toEqual({ a: [1, 2] });
    expect(unwrapResult({ content: [{ type: "text", text: "[1,2]" }] })).toEqual([1, 2]);
    expect(unwrapResult({ content: [{ type: "text", text: "{ not json" }] })).toBe("{ not json");
    expect(unwrapResult({ content: [{ type: "text", text: "42" }] })).toBe("42");
    expect(unwrapResult({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] })).toBe("a\nb");
  });

  it("returns non-text content as the content array, and null for no content", () => {
    const content = [{ type: "image", data: "AAAA", mimeType: "image/png" }, { type: "text", text: "x" }];
    expect(unwrapResult({ content })).toEqual(content);
    expect(unwrapResult({ content: [] })).toBeNull();
  });
});

describe("errors from isError results", () => {
  const at = { tool: "math", callable: "fail", label: "tools.math.fail" };

  it("infers a code only when the text is clear", () => {
    expect(errorCodeFromText("MCP error -32602: Input validation error: Invalid arguments for tool add")).toBe("INVALID_INPUT");
    expect(errorCodeFromText("MCP error -32602: Tool nope not found")).toBe("NOT_FOUND");
    expect(errorCodeFromText("ENOENT: no such file or directory, open 'x'")).toBe("NOT_FOUND");
    expect(errorCodeFromText("Permission denied")).toBe("PERMISSION");
    expect(errorCodeFromText("upstream timed out")).toBe("TIMEOUT");
    expect(errorCodeFromText("something went wrong")).toBe("INTERNAL");
  });

  it("builds a bounded, redacted ToolError", () => {
    const err = resultError({ isError: true, content: [{ type: "text", text: `token hunter2-secret leaked ${"x".repeat(5000)}` }] }, at, ["hunter2-secret"]);
    expect(err).toBeInstanceOf(ToolError);
    expect(err.code).toBe("INTERNAL");
    expect(err.message.startsWith("tools.math.fail failed: token *** leaked")).toBe(true);
    expect(err.message).not.toContain("hunter2-secret");
    expect(err.message.length).toBeLessThan(2_200);
    expect(resultError({ isError: true, content: [] }, at, []).message).toBe("tools.math.fail failed: (the server gave no error text)");
  });

  it("redacts every secret, longest first", () => {
    expect(redact("abc-long abc", ["abc-long", "abc"])).toBe("*** ***");
  });
});
