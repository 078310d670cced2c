/** `--language python` on `run` and `mcp`: the agent's code is Python in a python3 process, with the same namespaces. */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "./harness.js";
import { baseWithExampleTools, connectStdio, structuredOf, type StdioConnection } from "../mcp/harness.js";

let dir: string;
let conn: StdioConnection | undefined;

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
  await baseWithExampleTools(dir);
});
afterEach(async () => {
  await conn?.close();
  conn = undefined;
  await cleanup(dir);
});

describe("run --language python", () => {
  it("runs a py-code-mode style snippet unchanged: tools, artifacts, print, last value", async () => {
    const code = "out = tools.echo.say(text=['hi'])\nartifacts.save('a.json', {'said': out})\nprint('saved')\nartifacts.load('a.json')['said'].strip()";
    const r = await cli(["run", "--base", "base", "--language", "python", code], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("saved\nhi\n");
  });

  it("an exception exits 1 and names the Python exception", async () => {
    const r = await cli(["run", "--base", "base", "--language", "python", "{}['missing']"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("KeyError");
  });

  it("refuses --language python with another executor (usage error)", async () => {
    const r = await cli(["run", "--base", "base", "--executor", "in-process", "--language", "python", "1"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--language python .*--executor subprocess .*--executor sandbox/);
  });
});

describe("mcp --language python", () => {
  it("run_code is described as Python and runs Python", async () => {
    conn = await connectStdio(["--base", "base", "--language", "python"], { cwd: dir });
    const { tools } = await conn.client.listTools();
    const runCode = tools.find((t) => t.name === "run_code");
    expect(runCode?.title).toBe("Run Python");
    expect(runCode?.description).toMatch(/call_async/);
    const result = await conn.client.callTool({ name: "run_code", arguments: { code: "x = [t['name'] for t in tools.list()]\n'echo' in x" } });
    expect(structuredOf<{ ok: boolean; value: unknown }>(result)).toMatchObject({ ok: true, value: true });
  });
});
