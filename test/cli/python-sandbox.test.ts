/** `--executor sandbox --language python` on `run` and `mcp`: Python in Pyodide inside a deno process without permissions. */
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

describe("run --executor sandbox --language python", () => {
  it("runs a py-code-mode style snippet unchanged, and the host stays out of reach", async () => {
    const code = "out = tools.echo.say(text=['hi'])\nartifacts.save('a.json', {'said': out})\nprint('saved')\nimport js\ntry:\n    js.Deno.readTextFileSync('/etc/passwd')\n    denied = 'GOT'\nexcept Exception as e:\n    denied = type(e).__name__\nprint(denied)\nartifacts.load('a.json')['said'].strip()";
    const r = await cli(["run", "--base", "base", "--executor", "sandbox", "--language", "python", code], { cwd: dir, timeoutMs: 120_000 });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("saved\nJsException\nhi\n");
  }, 120_000);

  it("refuses --engine quickjs with --language python (usage error)", async () => {
    const r = await cli(["run", "--base", "base", "--executor", "sandbox", "--engine", "quickjs", "--language", "python", "1"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/deno engine/);
  });
});

describe("mcp --executor sandbox --language python", () => {
  it("run_code runs Python in the Pyodide sandbox", async () => {
    conn = await connectStdio(["--base", "base", "--executor", "sandbox", "--language", "python"], { cwd: dir });
    const result = await conn.client.callTool({ name: "run_code", arguments: { code: "import sys\n[t['name'] for t in tools.list()].count('echo'), sys.platform" } }, undefined, { timeout: 120_000 });
    expect(structuredOf<{ ok: boolean; value: unknown }>(result)).toMatchObject({ ok: true, value: [1, "emscripten"] });
  }, 120_000);
});

describe("mcp --executor sandbox --languages typescript,python", () => {
  it("run_code's language picks TypeScript in deno or Python in Pyodide, both sandboxed, sharing one store", async () => {
    conn = await connectStdio(["--base", "base", "--executor", "sandbox", "--engine", "deno", "--languages", "typescript,python"], { cwd: dir });
    const ts = await conn.client.callTool({ name: "run_code", arguments: { code: "await artifacts.save('shared.json', { from: 'ts' }); 1" } });
    expect(structuredOf<{ ok: boolean }>(ts)).toMatchObject({ ok: true });
    const py = await conn.client.callTool({ name: "run_code", arguments: { language: "python", code: "import sys\n(artifacts.load('shared.json')['from'], sys.platform)" } }, undefined, { timeout: 120_000 });
    expect(structuredOf<{ ok: boolean; value: unknown }>(py)).toMatchObject({ ok: true, value: ["ts", "emscripten"] });
  }, 120_000);
});

