import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { parseCliTool } from "../../src/tools/adapters/cli/schema.js";

function problem(doc: unknown): string {
  try {
    parseCliTool(doc, "/tools/x.yaml");
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as Error).message;
  }
  throw new Error("expected a ValidationError");
}

describe("parseCliTool", () => {
  it("normalises a py-code-mode style definition", () => {
    const s = parseCliTool(
      {
        name: "curl",
        description: "Make HTTP requests",
        tags: ["http"],
        schema: {
          options: { silent: { type: "boolean", short: "s" }, header: { type: "array", short: "H" } },
          positional: [{ name: "url", type: "string", required: true }],
        },
        recipes: { get: { description: "GET", preset: { silent: true }, params: { url: {} } } },
      },
      "curl.yaml",
    );
    expect(s.command).toEqual(["curl"]);
    expect(s.timeoutMs).toBe(60_000);
    expect(s.okExitCodes).toEqual([0]);
    expect(s.options.map((o) => o.name)).toEqual(["silent", "header"]);
    expect(s.recipes[0]).toEqual({ name: "get", description: "GET", preset: { silent: true }, params: [{ name: "url" }] });
  });

  it("treats empty YAML values (null) as empty", () => {
    const s = parseCliTool({ name: "x", schema: { options: { v: null }, positional: null }, recipes: { r: { params: null, preset: null } }, tags: null }, "x.yaml");
    expect(s.options[0]).toMatchObject({ name: "v", type: "string" });
    expect(s.recipes[0]!.params).toEqual([]);
  });

  it("names the file, the field path and what is accepted", () => {
    const msg = problem({ name: "x", schema: { options: { v: { type: "bool" } } } });
    expect(msg).toContain("/tools/x.yaml");
    expect(msg).toContain("schema.options.v.type");
    expect(msg).toContain("boolean, string, integer, number, array");
    expect(msg).toContain('"bool"');
  });

  it("lists accepted keys for an unknown key", () => {
    const msg = problem({ name: "x", recipies: {} });
    expect(msg).toMatch(/unknown key 'recipies'; accepted: name, type, description, command/);
  });

  it("requires a name", () => {
    expect(problem({ description: "d" })).toMatch(/name: expected the tool name/);
  });

  it("rejects invalid and reserved tool names", () => {
    expect(problem({ name: "my-tool" })).toMatch(/must be an identifier/);
    expect(problem({ name: "search" })).toMatch(/reserved/);
    expect(problem({ name: "delete" })).toMatch(/reserved word/);
  });

  it("rejects a non-positive timeout and a bad command", () => {
    expect(problem({ name: "x", timeout: 0 })).toMatch(/timeout: expected a positive number of seconds/);
    expect(problem({ name: "x", command: "" })).toMatch(/command: expected a non-empty executable name/);
  });

  it("rejects recipe params and preset keys that are not in the schema", () => {
    const msg = problem({
      name: "x",
      schema: { options: { silent: { type: "boolean" } }, positional: [{ name: "url" }] },
      recipes: { get: { preset: { silnt: true }, params: { ur: {} } } },
    });
    expect(msg).toContain("recipes.get.preset.silnt: not an option or positional of the schema; accepted: silent, url");
    expect(msg).toContain("recipes.get.params.ur: not an option or positional");
  });

  it("type-checks defaults and presets", () => {
    const msg = problem({
      name: "x",
      schema: { options: { n: { type: "integer", default: "five" }, f: { type: "boolean" } } },
      recipes: { r: { preset: { f: "yes" } } },
    });
    expect(msg).toMatch(/schema\.options\.n: 'default' expected integer, got string "five"/);
    expect(msg).toMatch(/recipes\.r\.preset: 'f' expected boolean, got string "yes"/);
  });

  it("rejects boolean positionals and required positionals after optional ones", () => {
    expect(problem({ name: "x", schema: { positional: [{ name: "p", type: "boolean" }] } })).toMatch(/a boolean belongs in options/);
    expect(problem({ name: "x", schema: { positional: [{ name: "a" }, { name: "b", required: true }] } })).toMatch(/required positional 'b' comes after optional 'a'/);
  });

  it("rejects a name used by both an option and a positional, and duplicate short flags", () => {
    expect(problem({ name: "x", schema: { options: { a: {} }, positional: [{ name: "a" }] } })).toMatch(/'a' is already the name/);
    expect(problem({ name: "x", schema: { options: { a: { short: "v" }, b: { short: "v" } } } })).toMatch(/'-v' is also the short flag of 'a'/);
  });

  it("rejects a short flag written with its dash", () => {
    expect(problem({ name: "x", schema: { options: { a: { short: "-a" } } } })).toMatch(/without a dash/);
  });

  it("rejects a recipe that can never supply a required parameter", () => {
    const msg = problem({ name: "x", schema: { positional: [{ name: "url", required: true }] }, recipes: { r: {} } });
    expect(msg).toMatch(/recipes\.r: required 'url' is neither in params nor in preset/);
  });

  it("accepts a required parameter supplied by a preset", () => {
    const s = parseCliTool({ name: "x", schema: { positional: [{ name: "url", required: true }] }, recipes: { r: { preset: { url: "u" } } } }, "x.yaml");
    expect(s.recipes[0]!.preset).toEqual({ url: "u" });
  });

  it("reports several problems at once", () => {
    const msg = problem({ name: "x", timeout: -1, tags: "a" });
    expect(msg).toContain("timeout");
    expect(msg).toContain("tags");
  });

  it("lists every problem of a file, whether shape or cross-field ones (one bad field hides nothing)", () => {
    const msg = problem({
      name: "bad name",
      timeout: -1,
      schema: {
        options: { verbose: { type: "bool" }, level: { type: "integer", short: "aa" }, ok: { type: "string" } },
        positional: [{ name: "f", type: "boolean" }, { name: "g", required: true, default: 5 }],
      },
      recipes: { r: { preset: { nope: 1, verbose: true } }, s: { params: { missing: {} }, extra: 1 } },
    });
    const lines = msg.split("\n").slice(1).map((l) => l.trim());
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^timeout: /),
        expect.stringMatching(/^schema\.options\.verbose\.type: /),
        expect.stringMatching(/^schema\.options\.level\.short: expected one flag character/),
        expect.stringMatching(/^schema\.positional\[0\]\.type: /),
        expect.stringMatching(/^schema\.positional\[1\]: 'default' expected string/),
        expect.stringMatching(/^name: tool name "bad name"/),
        expect.stringMatching(/^recipes\.r\.preset\.nope: not an option or positional/),
        expect.stringMatching(/^recipes\.s: unknown key 'extra'/),
      ]),
    );
    // 'verbose' is declared (with a bad type, reported above): a preset naming it is not "unknown".
    expect(msg).not.toMatch(/preset\.verbose: not an option/);
    expect(lines.length).toBe(8);
  });

  it("requires short to be one character: 'aa' would reach the command as -a -a", () => {
    expect(problem({ name: "x", schema: { options: { all: { type: "boolean", short: "aa" } } } })).toMatch(/schema\.options\.all\.short: expected one flag character/);
    expect(problem({ name: "x", schema: { options: { all: { type: "boolean", short: "" } } } })).toMatch(/short: expected one flag character/);
    expect(parseCliTool({ name: "x", schema: { options: { one: { type: "boolean", short: 1 } } } }, "x.yaml").options[0]!.short).toBe("1");
  });
});
