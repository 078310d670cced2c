import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { CliToolAdapter } from "../../src/tools/adapters/cli/adapter.js";
import { createToolAdapter, defaultToolFactories } from "../../src/tools/adapters/index.js";

/** The error a promise rejects with (fails the test if it resolves). */
async function caught<E extends Error = ToolError>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (e) {
    return e as E;
  }
  throw new Error("expected a rejection");
}

const doc = {
  name: "fmt",
  description: "printf",
  command: "printf",
  schema: {
    options: { mode: { type: "string", default: "a", description: "Mode" } },
    positional: [
      { name: "format", type: "string", required: true, description: "Format" },
      { name: "values", type: "array" },
    ],
  },
  recipes: {
    line: { description: "One value per line", preset: { format: "%s\\n" }, params: { values: { required: true, description: "Values" } } },
    pick: { preset: { format: "[%s]" }, params: { format: {}, values: { default: ["d"] }, mode: { default: "b" } } },
  },
};

describe("CliToolAdapter", () => {
  it("derives recipe params: effective defaults, requirement, description", async () => {
    const info = await CliToolAdapter.fromDocument(doc, "fmt.yaml").info();
    expect(info.callables[0]).toEqual({
      name: "line",
      description: "One value per line",
      returns: "string",
      params: [{ name: "values", type: "array", items: "string", required: true, description: "Values" }],
    });
    const pick = info.callables[1]!;
    expect(pick.params).toEqual([
      { name: "format", type: "string", required: false, default: "[%s]", description: "Format" },
      { name: "values", type: "array", items: "string", required: false, default: ["d"] },
      { name: "mode", type: "string", required: false, default: "b", description: "Mode" },
    ]);
    expect(info.direct!.params.map((p) => [p.name, p.required])).toEqual([["format", true], ["values", false], ["mode", false]]);
  });

  it("runs recipes with preset values and the escape hatch with caller values", async () => {
    const a = CliToolAdapter.fromDocument({ ...doc, schema: { ...doc.schema, options: {} }, recipes: { line: doc.recipes.line } }, "fmt.yaml");
    expect(await a.call("line", { values: ["x", "y z"] }, {})).toBe("x\ny z\n");
    expect(await a.call(null, { format: "<%s>", values: ["1"] }, {})).toBe("<1>");
  });

  it("refuses an unknown recipe when called directly", async () => {
    const a = CliToolAdapter.fromDocument(doc, "fmt.yaml");
    const e = await caught<ToolError>(a.call("lin", {}, {}));
    expect(e).toBeInstanceOf(ToolError);
    expect(e.code).toBe("NOT_FOUND");
    expect(e.message).toBe("Unknown recipe 'lin' of tool 'fmt'. Did you mean: line? Available: line, pick");
  });
});

describe("createToolAdapter", () => {
  const source = { file: "/t/x.yaml", dir: "/t" };
  it("treats an absent type and type: cli as CLI tools", async () => {
    expect(await createToolAdapter({ name: "a" }, source)).toBeInstanceOf(CliToolAdapter);
    expect(await createToolAdapter({ name: "a", type: "cli" }, source)).toBeInstanceOf(CliToolAdapter);
  });

  it("refuses documents that are not mappings", async () => {
    await expect(createToolAdapter(null, source)).rejects.toThrow("/t/x.yaml: the file is empty");
    await expect(createToolAdapter(["a"], source)).rejects.toThrow(/expected a mapping .* got a list/);
  });

  it("ships factories for cli, http, mcp, openapi and toolable tools", () => {
    expect(Object.keys(defaultToolFactories()).sort()).toEqual(["cli", "http", "mcp", "openapi", "toolable"]);
  });
});
