/** The middleware flags of `run` (the same ones `mcp` takes): --deny, --allow, --audit-log, --max-tool-calls. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "./harness.js";

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  expect((await cli(["init", "--base", "base"], { cwd: dir })).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await cleanup(dir);
});

describe("run with tool middleware flags", () => {
  it("--deny stops a matching call before it runs; other tools still work", async () => {
    const denied = await cli(["run", "--base", "base", "--deny", "echo.*", "await tools.echo.say({ text: ['x'] })"], { cwd: dir });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/ToolError: tools\.echo\.say: echo\.say is denied by policy \(deny: echo\.\*\)/);
    const other = await cli(["run", "--base", "base", "--deny", "echo.*", "(await tools.wc.lines({ files: ['/etc/hostname'] })).includes('/etc/hostname')"], { cwd: dir });
    expect(other.stdout).toBe("true\n");
  });

  it("--allow lets only matching calls through (repeatable)", async () => {
    const args = ["run", "--base", "base", "--allow", "uname.*", "--allow", "date.*"];
    expect((await cli([...args, "typeof (await tools.uname.kernel())"], { cwd: dir })).stdout).toBe("string\n");
    const blocked = await cli([...args, "await tools.echo.say({ text: ['x'] })"], { cwd: dir });
    expect(blocked.stderr).toMatch(/echo\.say is not allowed by policy \(allow: uname\.\*, date\.\*\)/);
  });

  it("--audit-log writes one JSON line per call, refused calls included", async () => {
    const log = path.join(dir, "logs", "audit.jsonl");
    await cli(["run", "--base", "base", "--audit-log", log, "--deny", "wc.*", "await tools.echo.say({ text: ['a'] }); await tools.wc.lines({ files: ['/etc/hostname'] }).catch(() => null)"], { cwd: dir });
    const lines = (await readFile(log, "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { call: string; ok: boolean; executor: string });
    expect(lines.map((l) => [l.call, l.ok, l.executor])).toEqual([["echo.say", true, "subprocess"], ["wc.lines", false, "subprocess"]]);
  });

  it("--max-tool-calls caps the calls of one run", async () => {
    const r = await cli(["run", "--base", "base", "--max-tool-calls", "1", "await tools.echo.say({ text: ['1'] }); await tools.echo.say({ text: ['2'] })"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/more than 1 tool calls in one run/);
  });

  it("rejects an empty glob and a bad count with exit 2", async () => {
    expect((await cli(["run", "--base", "base", "--deny", "", "1"], { cwd: dir })).code).toBe(2);
    expect((await cli(["run", "--base", "base", "--max-tool-calls", "zero", "1"], { cwd: dir })).code).toBe(2);
  });
});

describe("run --executor sandbox --engine", () => {
  it("runs in the deno engine, and --engine without the sandbox is a usage error", async () => {
    const r = await cli(["run", "--base", "base", "--executor", "sandbox", "--engine", "deno", "typeof Deno + ' ' + (await tools.echo.say({ text: ['via deno'] })).trim()"], { cwd: dir, timeoutMs: 60_000 });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("object via deno\n");
    const quick = await cli(["run", "--base", "base", "--executor", "sandbox", "typeof Deno"], { cwd: dir });
    expect(quick.stdout).toBe("undefined\n");
    const misuse = await cli(["run", "--base", "base", "--engine", "deno", "1"], { cwd: dir });
    expect(misuse.code).toBe(2);
    expect(misuse.stderr).toMatch(/--engine deno applies to --executor sandbox only/);
  }, 90_000);
});
