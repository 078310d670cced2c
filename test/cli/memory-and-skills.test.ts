/**
 * CLI parity (issue 33 item 7), through the built command line: `--memory-mb` caps every executor
 * that can cap memory (subprocess, python, sandbox, container; it was "container only"), and
 * `--skills DIR` gives `run`, `mcp` and `serve` folders of Agent Skills. The issue's own snippet,
 * `bytearray(3*1024**3)` in Python with `--memory-mb 256`, is a MemoryLimitError and the session
 * goes on.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, tempDir } from "./harness.js";
import { connectStdio, textOf } from "../mcp/harness.js";
import { api, startServe, TOKEN, type ServeProcess } from "../server/harness.js";

const ISSUE_SNIPPET = "bytearray(3*1024**3)";
const onLinux = process.platform === "linux";

let dir: string;
let roots: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  // A folder of skill folders, as a client keeps them (e.g. ./.claude/skills).
  roots = path.join(dir, "my-skills");
  await mkdir(path.join(roots, "release-notes"), { recursive: true });
  await writeFile(path.join(roots, "release-notes", "SKILL.md"), "---\nname: release-notes\ndescription: Write release notes from merged changes. Use when asked for a changelog.\n---\n\n# Release notes\n\nGroup by area.\n");
}, 180_000);

afterAll(async () => {
  await cleanup(dir);
});

describe.runIf(onLinux)("--memory-mb for the subprocess and Python executors", () => {
  it(`run --language python --memory-mb 256 '${ISSUE_SNIPPET}' is a MemoryLimitError (exit 1)`, async () => {
    const r = await cli(["run", "--base", path.join(dir, "py"), "--language", "python", "--memory-mb", "256", ISSUE_SNIPPET], { cwd: dir, timeoutMs: 60_000 });
    expect(r.stderr).toMatch(/MemoryLimitError: .*256 MB/);
    expect(r.code).toBe(1);
  }, 90_000);

  it("run --memory-mb 64 (TypeScript, subprocess): memory outside V8's heap past the cap is a MemoryLimitError", async () => {
    const code = "const kept: unknown[] = []; for (let i = 0; i < 100; i++) { kept.push(Buffer.alloc(8 * 1024 * 1024, 1)); await new Promise((r) => setImmediate(r)); } kept.length";
    const r = await cli(["run", "--base", path.join(dir, "ts"), "--memory-mb", "64", "--json", code], { cwd: dir, timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { name: "MemoryLimitError", message: expect.stringMatching(/64 MB/) } });
  }, 90_000);

  it("over MCP (mcp --language python --memory-mb 256) the session recovers after the MemoryLimitError", async () => {
    const conn = await connectStdio(["--base", path.join(dir, "mcp-py"), "--language", "python", "--memory-mb", "256"], { cwd: dir });
    try {
      const call = async (code: string) => textOf(await conn.client.callTool({ name: "run_code", arguments: { code } }, undefined, { timeout: 120_000 }));
      expect(await call("x = 41\nx + 1")).toMatch(/42/);
      expect(await call(ISSUE_SNIPPET)).toMatch(/MemoryLimitError[\s\S]*256 MB[\s\S]*variables from earlier runs were lost/);
      // A fresh Python process took over: the session works, its earlier variables are gone.
      expect(await call("'x' in globals(), 6 * 7")).toMatch(/\(False, 42\)/);
    } finally {
      await conn.close();
    }
  }, 180_000);

  it("over serve (serve --memory-mb 64): the same session runs again after a MemoryLimitError", async () => {
    const server: ServeProcess = await startServe(["--base", path.join(dir, "serve-mem"), "--token", TOKEN, "--memory-mb", "64", "--spare-executors", "0"]);
    try {
      const created = await api(server.url, "POST", "/sessions", { json: {} });
      const id = (created.body as { id: string }).id;
      const run = async (code: string) => (await api(server.url, "POST", `/sessions/${id}/run`, { json: { code, timeoutMs: 60_000 } })).body as { ok: boolean; value?: unknown; error?: { name: string } };
      expect(await run("globalThis.kept = 1; 1")).toMatchObject({ ok: true, value: 1 });
      expect(await run("const a: unknown[] = []; for (let i = 0; i < 100; i++) { a.push(Buffer.alloc(8 * 1024 * 1024, 1)); await new Promise((r) => setImmediate(r)); } a.length")).toMatchObject({
        ok: false,
        error: { name: "MemoryLimitError" },
      });
      expect(await run("[typeof globalThis.kept, 6 * 7]")).toMatchObject({ ok: true, value: ["undefined", 42] });
    } finally {
      await server.stop();
    }
  }, 120_000);

  it("refuses --memory-mb where it cannot hold (in-process, --remote) and out-of-range values, naming the fix (exit 2)", async () => {
    const inProcess = await cli(["run", "--base", dir, "--executor", "in-process", "--memory-mb", "64", "1"], { cwd: dir });
    expect(inProcess.code).toBe(2);
    expect(inProcess.stderr).toMatch(/--memory-mb: the in-process executor shares this process's heap and cannot cap it; use --executor subprocess/);
    const remote = await cli(["run", "--remote", "http://127.0.0.1:9", "--token", TOKEN, "--memory-mb", "64", "1"], { cwd: dir });
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/the server's executor sets the memory cap.*serve --memory-mb N/);
    const tiny = await cli(["run", "--base", dir, "--memory-mb", "8", "1"], { cwd: dir });
    expect(tiny.code).toBe(2);
    expect(tiny.stderr).toMatch(/expected a whole number of megabytes from 16 to 1048576/);
  }, 60_000);
});

describe("--skills DIR on run, mcp and serve", () => {
  it("run: the folder's skills are listed and loaded, in TypeScript and in Python", async () => {
    const ts = await cli(["run", "--base", path.join(dir, "skills-ts"), "--skills", roots, "--json", "(await skills.list()).map((s) => s.name)"], { cwd: dir, timeoutMs: 60_000 });
    expect(ts.stderr).toBe("");
    expect(JSON.parse(ts.stdout)).toMatchObject({ ok: true, value: ["release-notes"] });
    const py = await cli(["run", "--base", path.join(dir, "skills-py"), "--language", "python", "--skills", roots, "[s['name'] for s in skills.list()]"], { cwd: dir, timeoutMs: 60_000 });
    expect(py.stdout).toMatch(/\['release-notes'\]/);
    expect(py.code).toBe(0);
  }, 120_000);

  it("mcp: run_code sees the folder's skills", async () => {
    const conn = await connectStdio(["--base", path.join(dir, "skills-mcp"), "--skills", roots], { cwd: dir });
    try {
      const r = await conn.client.callTool({ name: "run_code", arguments: { code: "(await skills.load('release-notes')).body" } }, undefined, { timeout: 60_000 });
      expect(textOf(r)).toMatch(/Group by area/);
    } finally {
      await conn.close();
    }
  }, 120_000);

  it("serve: a session's code sees the folder's skills", async () => {
    const server = await startServe(["--base", path.join(dir, "skills-serve"), "--token", TOKEN, "--skills", roots]);
    try {
      const id = ((await api(server.url, "POST", "/sessions", { json: {} })).body as { id: string }).id;
      const r = await api(server.url, "POST", `/sessions/${id}/run`, { json: { code: "(await skills.list()).map((s) => s.name)" } });
      expect(r.body).toMatchObject({ ok: true, value: ["release-notes"] });
    } finally {
      await server.stop();
    }
  }, 120_000);

  it("a folder that does not exist is a usage error at start (exit 2), on every command", async () => {
    const missing = path.join(dir, "no-such-skills");
    for (const args of [
      ["run", "--base", dir, "--skills", missing, "1"],
      ["mcp", "--base", dir, "--skills", missing],
      ["serve", "--base", dir, "--no-auth", "--port", "0", "--skills", missing],
    ]) {
      const r = await cli(args, { cwd: dir });
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(/--skills .*no-such-skills: no such folder/);
    }
  }, 60_000);
});
