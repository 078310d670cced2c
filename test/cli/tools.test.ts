/**
 * `ts-code-mode tools …` on the built bin: JSON output a script can rely on (failures included),
 * a listing table that fits the terminal, and a tools folder with one unusable MCP server.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, initTemplate, tempDir, type InitTemplate } from "./harness.js";

let dir: string;
/** The base one `init` made (harness.ts's initTemplate): the tests that need one get a copy. */
let template: InitTemplate;

beforeAll(async () => {
  await ensureBuilt();
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

async function initBase(): Promise<void> {
  await template.copyTo(dir);
}

function onBase(args: string[]) {
  return cli([...args, "--base", "base"], { cwd: dir });
}

const STACK_LINE = /^\s+at /m;

describe("tools call --json", () => {
  it("prints a tool failure as JSON on stdout, with the ToolError's fields, exit 1", async () => {
    await initBase();
    const r = await onBase(["tools", "call", "wc.lines", "--args", '{"files":["/no/such/file-7f3a"]}', "--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { error: Record<string, unknown> };
    expect(out.error).toMatchObject({ name: "ToolError", tool: "wc", callable: "lines", exitCode: 1, message: expect.stringContaining("file-7f3a") });
    expect(typeof out.error["code"]).toBe("string");
    expect(r.stdout).not.toMatch(STACK_LINE);
  });

  it("prints invalid arguments, unknown names and bad --args as JSON too (usage errors exit 2)", async () => {
    await initBase();
    const invalid = await onBase(["tools", "call", "echo.say", "--args", '{"text":5}', "--json"]);
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout)).toMatchObject({ error: { name: "ToolError", code: "INVALID_INPUT", tool: "echo", callable: "say" } });
    const unknown = await onBase(["tools", "call", "ech.say", "--json"]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ error: { name: "NotFoundError", suggestions: expect.arrayContaining(["echo"]) } });
    const usage = await onBase(["tools", "call", "echo.say", "--args", "{text", "--json"]);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toMatchObject({ error: { name: "CliUsageError", message: expect.stringContaining("--args is not valid JSON") } });
  });

  it("an option-injection attempt is refused as INVALID_INPUT, not run", async () => {
    await initBase();
    const r = await onBase(["tools", "call", "echo.say", "--args", '{"text":["--help"]}', "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: "INVALID_INPUT", message: expect.stringContaining("cannot start with '-'") } });
  });
});

describe("tools describe --json", () => {
  it("prints the name and the declaration; an unknown tool as a JSON error", async () => {
    await initBase();
    const r = await onBase(["tools", "describe", "echo", "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { name: string; declaration: string };
    expect(out.name).toBe("echo");
    expect(out.declaration).toContain("declare namespace tools");
    const missing = await onBase(["tools", "describe", "ech", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { name: "NotFoundError", message: expect.stringContaining("Did you mean: echo") } });
  });
});

describe("tools list", () => {
  it("fits the table to 100 columns when stdout is not a terminal; --json keeps every callable", async () => {
    const tools = path.join(dir, "base", "tools");
    await mkdir(tools, { recursive: true });
    const recipes = Array.from({ length: 13 }, (_, i) => `  recipe_with_a_rather_long_name_${i}: { description: "Recipe ${i}" }`).join("\n");
    await writeFile(
      path.join(tools, "wide.yaml"),
      `name: wide\ndescription: ${"A tool with a very long description that goes on and on ".repeat(4)}\ncommand: "true"\nrecipes:\n${recipes}\n`,
    );
    await writeFile(path.join(tools, "small.yaml"), "name: small\ndescription: Short\ncommand: \"true\"\nrecipes:\n  one: {}\n");
    const r = await onBase(["tools", "list"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
    expect(lines.find((l) => l.startsWith("wide"))).toMatch(/recipe_with_a_rather_long_name_0, .*… \+\d+\s+A tool with .*…$/);
    expect(lines.find((l) => l.startsWith("small"))).toMatch(/^small\s+one\s+Short$/);
    const json = JSON.parse((await onBase(["tools", "list", "--json"])).stdout) as Array<{ name: string; callables: unknown[] }>;
    expect(json.find((t) => t.name === "wide")?.callables).toHaveLength(13);
  });

  it("loads the other tools when an MCP server's ${VAR} is unset, and lists that server as unavailable", async () => {
    await initBase();
    await writeFile(
      path.join(dir, "base", "tools", "remote.yaml"),
      'name: remote\ntype: mcp\ncommand: node\nenv: { API_KEY: "${TCM_UNSET_VARIABLE_FOR_TEST}" }\n',
    );
    const list = await onBase(["tools", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^echo\s+say, raw/m);
    expect(list.stdout).toMatch(/^remote\s+-\s+\(unavailable: MCP server 'remote' cannot start/m);
    const json = JSON.parse((await onBase(["tools", "list", "--json"])).stdout) as Array<{ name: string; description: string }>;
    expect(json.find((t) => t.name === "remote")?.description).toContain("env.API_KEY: environment variable TCM_UNSET_VARIABLE_FOR_TEST is not set");
    const call = await onBase(["tools", "call", "echo.say", "--args", '{"text":["ok"]}']);
    expect(call.code).toBe(0);
    expect(call.stdout).toBe("ok\n");
    const remote = await onBase(["tools", "call", "remote.x"]);
    expect(remote.code).toBe(1);
    expect(remote.stderr).toContain("TCM_UNSET_VARIABLE_FOR_TEST is not set");
  });
});
