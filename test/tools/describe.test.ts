import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCliTool } from "../../src/tools/adapters/cli/schema.js";
import { cliToolInfo } from "../../src/tools/adapters/cli/adapter.js";
import { callableSignature, describeTool, describeTools, paramTypeText } from "../../src/tools/describe.js";
import type { ToolInfo } from "../../src/tools/protocol.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { typeErrors } from "../helpers/typecheck.js";

const EXAMPLES = fileURLToPath(new URL("../../examples/tools", import.meta.url));


const curlInfo = cliToolInfo(
  parseCliTool(
    {
      name: "curl",
      description: "Make HTTP requests",
      tags: ["http", "network"],
      schema: {
        options: {
          silent: { type: "boolean", short: "s", description: "Silent mode" },
          header: { type: "array", short: "H", description: "HTTP headers" },
          request: { type: "string", short: "X", enum: ["GET", "POST"], default: "GET", description: "Method" },
          max_time: { type: "number" },
        },
        positional: [{ name: "url", type: "string", required: true, description: "URL to request" }],
      },
      recipes: {
        get: { description: "Simple GET request", preset: { silent: true }, params: { url: {} } },
        post: { description: "POST", preset: { request: "POST" }, params: { url: {}, request: {} } },
        delete: { description: "DELETE", params: { url: {} } },
      },
    },
    "curl.yaml",
  ),
);

const awkward: ToolInfo = {
  name: "weather",
  type: "mcp",
  description: "Weather data.\nSecond line with a */ comment terminator.",
  tags: [],
  direct: null,
  callables: [
    {
      name: "get-weather",
      description: "Forecast",
      returns: "unknown",
      params: [
        { name: "max-results", type: "integer", required: false, default: 5, description: "How many" },
        { name: "units", type: "string", required: true, enum: ["metric", "imperial"] },
        { name: "level", type: "number", required: false, enum: [1, 2, null] },
        { name: "days", type: "array", items: "integer", required: false },
        { name: "where", type: "object", required: true, properties: [{ name: "lat", type: "number", required: true }, { name: "lon", type: "number", required: true }] },
        { name: "extra", type: "object", required: false },
        { name: "raw", type: "unknown", required: false },
        { name: "tags", type: "array", required: false },
      ],
    },
    { name: "123go", description: "", returns: "number", params: [] },
    { name: "new", description: "Reserved word as a callable name", returns: "string", params: [{ name: "x", type: "string", required: false }] },
    { name: "new_", description: "Name that pascal-cases like another", returns: "string", params: [{ name: "y", type: "string", required: true }] },
  ],
};

let examples: ToolRegistry;
beforeAll(async () => {
  examples = await ToolRegistry.load(EXAMPLES);
});
afterAll(async () => {
  await examples.close();
});

describe("callableSignature", () => {
  it("renders one line with optional markers, unions and arrays", () => {
    expect(callableSignature("get", curlInfo.callables[0]!)).toBe("get(args: { url: string }): Promise<string>");
    expect(callableSignature("curl", curlInfo.direct!)).toBe(
      'curl(args: { url: string; silent?: boolean; header?: string[]; request?: "GET" | "POST"; max_time?: number }): Promise<string>',
    );
    expect(callableSignature("123go", awkward.callables[1]!)).toBe("123go(): Promise<number>");
    expect(callableSignature("new", awkward.callables[2]!)).toBe("new(args?: { x?: string }): Promise<string>");
  });

  it("quotes keys that are not identifiers and renders nested objects", () => {
    const sig = callableSignature("get-weather", awkward.callables[0]!);
    expect(sig).toContain('"max-results"?: number');
    expect(sig).toContain("where: { lat: number; lon: number }");
    expect(sig).toContain("level?: 1 | 2 | null");
    expect(sig).toContain("days?: number[]");
    expect(sig).toContain("extra?: Record<string, unknown>");
    expect(sig).toContain("tags?: unknown[]");
  });

  it("paramTypeText wraps union element types of arrays", () => {
    expect(paramTypeText({ type: "array", items: "string" })).toBe("string[]");
    expect(paramTypeText({ type: "array", items: "object" })).toBe("Array<Record<string, unknown>>");
  });
});

describe("describeTool", () => {
  it("produces JSDoc'd declarations for a CLI tool", () => {
    const text = describeTool(curlInfo);
    expect(text).toContain("declare namespace tools {");
    expect(text).toContain("    interface GetArgs {\n      /** URL to request */\n      url: string;\n    }");
    expect(text).toContain("      /**\n       * Method\n       * @default \"POST\"\n       */\n      request?: \"GET\" | \"POST\";");
    expect(text).toContain("   * Make HTTP requests\n   *\n   * Tags: http, network\n");
    expect(text).toContain("  const curl: {\n");
    expect(text).toContain("    (args: curl.Args): Promise<string>;");
    expect(text).toContain("    /** Simple GET request */\n    get(args: curl.GetArgs): Promise<string>;");
    expect(text).toContain("    delete(args: curl.DeleteArgs): Promise<string>;");
  });

  it("compiles with zero diagnostics, and calls type-check against it", () => {
    const usage = `
      async function demo(): Promise<string> {
        const a: string = await tools.curl.get({ url: "https://example.com" });
        const b = await tools.curl.post({ url: "u", request: "POST" });
        const c = await tools.curl({ url: "u", header: ["A: 1"], max_time: 2 });
        await tools.curl.delete({ url: "u" });
        return a + b + c;
      }
      void demo;`;
    expect(typeErrors(describeTool(curlInfo) + usage)).toEqual([]);
  });

  it("makes wrong calls fail to type-check", () => {
    const decl = describeTool(curlInfo);
    expect(typeErrors(`${decl}\nvoid tools.curl.get({});`).join("\n")).toMatch(/url/);
    expect(typeErrors(`${decl}\nvoid tools.curl.get({ url: 5 });`).length).toBeGreaterThan(0);
    expect(typeErrors(`${decl}\nvoid tools.curl({ url: "u", request: "PUT" });`).length).toBeGreaterThan(0);
    expect(typeErrors(`${decl}\nvoid tools.curl.gett({ url: "u" });`).join("\n")).toMatch(/gett/);
  });

  it("compiles for awkward generic ToolInfo (reserved words, dashes, digits, no escape hatch)", () => {
    const text = describeTool(awkward);
    expect(text).toContain('"get-weather"(args: weather.GetWeatherArgs): Promise<unknown>;');
    expect(text).toContain('"123go"(): Promise<number>;');
    expect(text).toContain("\"new\"(args?: weather.NewArgs): Promise<string>;");
    expect(text).toContain("new_(args: weather.NewArgs2): Promise<string>;");
    expect(text).toContain("*\\/ comment terminator");
    expect(text).not.toContain("(args: weather.Args)");
    const usage = `
      async function demo() {
        await tools.weather["get-weather"]({ units: "metric", where: { lat: 1, lon: 2 }, "max-results": 3 });
        await tools.weather["123go"]();
        await tools.weather.new();
      }
      void demo;`;
    expect(typeErrors(text + usage)).toEqual([]);
  });

  it("compiles for tools named like global types", () => {
    const shadow = (name: string): ToolInfo => ({ ...curlInfo, name });
    const text = describeTools([shadow("Promise"), shadow("Record"), shadow("Array"), shadow("string")]);
    expect(typeErrors(`${text}\nasync function f() { const s: string = await tools.Promise.get({ url: "u" }); return s; }\nvoid f;`)).toEqual([]);
  });

  it("every example tool's declaration compiles, alone and all together", async () => {
    const texts = await Promise.all(examples.names().map((n) => examples.describe(n)));
    for (const t of texts) expect(typeErrors(t)).toEqual([]);
    const usage = `
      async function demo() {
        const when: string = await tools.date.iso({ utc: true });
        await tools.grep.search({ pattern: "x", paths: ["a"], ignore_case: true });
        await tools.uname.all();
        await tools.ls({ long: true, paths: ["."] });
        return when;
      }
      void demo;`;
    expect(typeErrors(texts.join("\n") + usage)).toEqual([]);
  });
});
