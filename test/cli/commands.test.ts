/** `ts-code-mode init`, `tools …` and `workflows …` against a real base folder. */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, initTemplate, tempDir, type InitTemplate } from "./harness.js";

let dir: string;
/** The base one `init` made: the tests that need an initialised base get a copy. */
let template: InitTemplate;

beforeAll(ensureBuilt);
beforeAll(async () => {
  template = await initTemplate();
}, 120_000);
afterAll(async () => {
  await template?.close();
});
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await cleanup(dir);
});

/** Runs a command against `<dir>/base` after `init`. */
async function onBase(args: string[]) {
  return cli([...args, "--base", "base"], { cwd: dir });
}

/** The base `init` makes, copied (`init` itself is tested in its own describe). */
async function initBase(): Promise<void> {
  await template.copyTo(dir);
}

/** A stack trace has lines starting with "    at ". */
const STACK_LINE = /^\s+at /m;

describe("init", () => {
  it("copies the example tools and adds the example workflows with derived metadata", async () => {
    const r = await cli(["init", "--base", "base", "--json"], { cwd: dir });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { base: string; tools: Array<{ file: string; outcome: string }>; workflows: Array<{ name: string; outcome: string }> };
    expect(report.base).toBe(path.join(dir, "base"));
    expect(report.tools).toContainEqual({ file: "echo.yaml", outcome: "created" });
    expect(report.workflows).toContainEqual({ name: "triple", outcome: "created" });
    const yaml = await readFile(path.join(dir, "base", "tools", "echo.yaml"), "utf8");
    expect(yaml).toContain("name: echo");
    const show = await onBase(["workflows", "show", "triple", "--json"]);
    expect(JSON.parse(show.stdout)).toMatchObject({ name: "triple", description: expect.stringContaining("Triple a number"), params: [{ name: "n", type: "number", required: true }] });
  });

  it("keeps what exists unless --force", async () => {
    await initBase();
    const echo = path.join(dir, "base", "tools", "echo.yaml");
    await writeFile(echo, "# edited\nname: echo\ncommand: echo\n");
    const again = await cli(["init", "--base", "base"], { cwd: dir });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/kept\s+tools\/echo\.yaml/);
    expect(again.stdout).toMatch(/kept\s+workflow triple/);
    expect(await readFile(echo, "utf8")).toContain("# edited");
    const forced = await cli(["init", "--base", "base", "--force"], { cwd: dir });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/replaced\s+tools\/echo\.yaml/);
    expect(forced.stdout).toMatch(/replaced\s+workflow triple/);
    expect(await readFile(echo, "utf8")).not.toContain("# edited");
  });
});

describe("tools", () => {
  it("lists tools as a table and as JSON", async () => {
    await initBase();
    const table = await onBase(["tools", "list"]);
    expect(table.code).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(/^TOOL\s+CALLABLES\s+DESCRIPTION$/);
    expect(table.stdout).toMatch(/^echo\s+say, raw\s+Print text to standard output$/m);
    const json = await onBase(["tools", "list", "--json"]);
    const names = (JSON.parse(json.stdout) as Array<{ name: string }>).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "wc", "grep"]));
  });

  it("says where tools are expected when there are none", async () => {
    const r = await onBase(["tools", "list"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`No tools in ${path.join(dir, "base", "tools")}`);
  });

  it("searches tools, best match first, with --limit", async () => {
    await initBase();
    const r = await onBase(["tools", "search", "count lines", "--limit", "1", "--json"]);
    expect(r.code).toBe(0);
    const found = JSON.parse(r.stdout) as Array<{ name: string; score: number }>;
    expect(found).toHaveLength(1);
    expect(found[0]?.name).toBe("wc");
    const bad = await onBase(["tools", "search", "x", "--limit", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--limit");
  });

  it("describes a tool as a TypeScript declaration", async () => {
    await initBase();
    const r = await onBase(["tools", "describe", "echo"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("declare namespace tools");
    expect(r.stdout).toMatch(/say\(args: echo\.SayArgs\): Promise<string>;/);
  });

  it("suggests the closest tool for an unknown name, exit 1, no stack", async () => {
    await initBase();
    const r = await onBase(["tools", "describe", "ech"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: Unknown tool: ech\. Did you mean: echo/);
    expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it("calls a recipe with --args", async () => {
    await initBase();
    const r = await onBase(["tools", "call", "echo.say", "--args", '{"text":["x"]}']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("x\n");
    const json = await onBase(["tools", "call", "echo.say", "--args", '{"text":["x", "y"]}', "--json"]);
    expect(JSON.parse(json.stdout)).toBe("x y\n");
  });

  it("reads --args from a file with @FILE and from stdin with -", async () => {
    await initBase();
    await writeFile(path.join(dir, "args.json"), '{"text":["from", "file"]}');
    const file = await onBase(["tools", "call", "echo.say", "--args", "@args.json"]);
    expect(file.stdout).toBe("from file\n");
    const stdin = await cli(["tools", "call", "echo.say", "--args", "-", "--base", "base"], { cwd: dir, input: '{"text":["piped"]}' });
    expect(stdin.stdout).toBe("piped\n");
    const missing = await onBase(["tools", "call", "echo.say", "--args", "@nope.json"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("error: --args @nope.json: no such file: nope.json\n");
  });

  it("reports bad --args as a usage error and bad argument types as a tool error", async () => {
    await initBase();
    const notJson = await onBase(["tools", "call", "echo.say", "--args", "{text"]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/^error: --args is not valid JSON/);
    const notObject = await onBase(["tools", "call", "echo.say", "--args", "[1]"]);
    expect(notObject.code).toBe(2);
    const wrongType = await onBase(["tools", "call", "echo.say", "--args", '{"text":5}']);
    expect(wrongType.code).toBe(1);
    expect(wrongType.stderr).toMatch(/^error: tools\.echo\.say: Invalid argument 'text' expected array of string, got number 5/);
    expect(wrongType.stderr).not.toMatch(STACK_LINE);
  });
});

describe("workflows", () => {
  it("lists workflows with their parameters", async () => {
    await initBase();
    const r = await onBase(["workflows", "list"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^triple\s+n: number\s+Triple a number\./m);
    expect(r.stdout).toMatch(/^count_lines\s+files: string\[\], save_as\?: string = "reports\/line-counts\.json"/m);
    const json = JSON.parse((await onBase(["workflows", "list", "--json"])).stdout) as Array<{ name: string }>;
    expect(json.map((w) => w.name)).toEqual(["count_lines", "system_report", "triple"]);
  });

  it("searches workflows", async () => {
    await initBase();
    const r = await onBase(["workflows", "search", "triple a number", "--json"]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ name: string }>)[0]?.name).toBe("triple");
    const table = await onBase(["workflows", "search", "kernel architecture"]);
    expect(table.stdout).toMatch(/^SCORE\s+WORKFLOW/);
    expect(table.stdout).toMatch(/^\d\.\d\d\s+system_report\s/m);
  });

  it("shows description, parameters and source", async () => {
    await initBase();
    const r = await onBase(["workflows", "show", "triple"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Triple a number.");
    expect(r.stdout).toMatch(/^ {2}n: number$/m);
    expect(r.stdout).toContain("export async function run({ n }: { n: number })");
    const json = JSON.parse((await onBase(["workflows", "show", "triple", "--json"])).stdout) as Record<string, unknown>;
    expect(json.source).toContain("return n * 3;");
    expect(json).toHaveProperty("createdAt");
  });

  it("suggests the closest workflow for an unknown name, exit 1", async () => {
    await initBase();
    const close = await onBase(["workflows", "show", "tripel"]);
    expect(close.code).toBe(1);
    expect(close.stderr).toBe("error: Unknown workflow: tripel. Did you mean: triple?\n");
    const far = await onBase(["workflows", "show", "nope"]);
    expect(far.code).toBe(1);
    expect(far.stderr).toBe("error: Unknown workflow: nope. Available: count_lines, system_report, triple\n");
  });

  it("deletes a workflow; deleting one that is not there exits 1 with a suggestion", async () => {
    await initBase();
    const r = await onBase(["workflows", "delete", "triple"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Deleted workflow triple.\n");
    const list = JSON.parse((await onBase(["workflows", "list", "--json"])).stdout) as Array<{ name: string }>;
    expect(list.map((w) => w.name)).toEqual(["count_lines", "system_report"]);
    const again = await onBase(["workflows", "delete", "count_line"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe("error: Unknown workflow: count_line. Did you mean: count_lines?\n");
    const json = await onBase(["workflows", "remove", "triple", "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ deleted: false });
  });

  it("rejects a malformed workflow name without a stack trace", async () => {
    await initBase();
    const r = await onBase(["workflows", "show", "../etc"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: Invalid workflow name/);
    expect(r.stderr).not.toMatch(STACK_LINE);
  });
});

describe("help", () => {
  it("every command has a description and examples", async () => {
    for (const args of [["init"], ["tools"], ["tools", "list"], ["tools", "search"], ["tools", "describe"], ["tools", "call"], ["workflows"], ["workflows", "list"], ["workflows", "search"], ["workflows", "show"]]) {
      const r = await cli([...args, "--help"], { cwd: dir });
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toContain(`Usage: ts-code-mode ${args.join(" ")}`);
      expect(r.stdout, args.join(" ")).toContain("Examples:");
    }
  });

  it("exits 2 for an unknown command", async () => {
    const r = await cli(["frobnicate"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });
});
