/**
 * `--sessions-per-child N` (issue 42 item 4 from the command line): the sessions of one `mcp` or
 * `serve` process share node children, N to a child, as the docs/executors.md commands show; and
 * every place the flag would not hold is refused with the reason, never ignored.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/index.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { cleanup, connectHttp, ensureBuilt, REPO, runCli, startHttpServer, tempDir, textOf } from "../mcp/harness.js";
import { api, startServe, TOKEN } from "../server/harness.js";
import { removeProject, writeProject } from "../agents/project.js";
import { scripted, toolResults } from "../agents/scripted.js";

/** The guest's child process: sessions that share a child see the same pid. */
const PID = "process.pid";

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
}, 240_000);
afterAll(async () => {
  await cleanup(dir);
});

/** The docs' commands, each line without its `ts-code-mode` and with $TOKEN as the test's token. */
function docCommands(): string[][] {
  const doc = readFileSync(path.join(REPO, "docs", "executors.md"), "utf8");
  const block = /<!-- docs: run by test\/cli\/sessions-per-child\.test\.ts -->\n```sh\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error("docs/executors.md has no block run by this test");
  return block
    .trim()
    .split("\n")
    .map((line) => line.replace(/^ts-code-mode /, "").replace('"$TOKEN"', TOKEN).split(/\s+/));
}

describe("--sessions-per-child", () => {
  it("mcp (the docs' command, over HTTP): two clients' sessions run in one child, each with its own variables", async () => {
    const args = docCommands().find((a) => a[0] === "mcp");
    expect(args).toEqual(["mcp", "--base", "./.code-mode", "--sessions-per-child", "16"]);
    const http = await startHttpServer(["--token", TOKEN, ...args!.slice(1)], { cwd: dir });
    try {
      const a = await connectHttp(http.url, TOKEN);
      const b = await connectHttp(http.url, TOKEN);
      try {
        const run = async (c: typeof a, code: string) => textOf(await c.callTool({ name: "run_code", arguments: { code } }, undefined, { timeout: 120_000 }));
        const [pidA, pidB] = [await run(a, PID), await run(b, PID)];
        expect(pidA).toMatch(/\d+/);
        expect(pidB).toBe(pidA);
        await run(a, "var mine = 'a'");
        expect(await run(b, "typeof mine")).toContain("undefined");
        expect(await run(a, "mine")).toContain("a");
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      await http.stop();
    }
  }, 240_000);

  it("serve (the docs' command): two sessions run in one child; --memory-mb caps the child", async () => {
    const args = docCommands().find((a) => a[0] === "serve");
    expect(args).toEqual(["serve", "--base", "./.code-mode", "--token", TOKEN, "--sessions-per-child", "16", "--memory-mb", "512"]);
    const base = path.join(dir, "served");
    const s = await startServe([...args!.slice(1).map((a) => (a === "./.code-mode" ? base : a)), "--tools", EXAMPLE_TOOLS_PATH]);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) ids.push(((await api(s.url, "POST", "/sessions", { json: {} })).body as { id: string }).id);
      const pids = [];
      for (const id of ids) {
        const r = await api(s.url, "POST", `/sessions/${id}/run`, { json: { code: PID } });
        expect(r.body).toMatchObject({ ok: true });
        pids.push((r.body as { value: number }).value);
      }
      expect(pids[1]).toBe(pids[0]);
      // The cap is the shared child's: going over it is a MemoryLimitError, and the session goes on in a new child.
      const over = await api(s.url, "POST", `/sessions/${ids[0]}/run`, { json: { code: "const keep = []; for (;;) keep.push(new Array(1e6).fill(Math.random()));", timeoutMs: 120_000 } });
      expect(over.body).toMatchObject({ ok: false, error: { name: "MemoryLimitError" } });
      expect((await api(s.url, "POST", `/sessions/${ids[0]}/run`, { json: { code: "1 + 1" } })).body).toMatchObject({ ok: true, value: 2 });
    } finally {
      await s.stop();
    }
  }, 300_000);

  it.each([
    [["run", "--executor", "sandbox", "--sessions-per-child", "2", "1"], /--sessions-per-child puts several TypeScript sessions in one node child.*--executor sandbox/],
    [["run", "--language", "python", "--sessions-per-child", "2", "1"], /--sessions-per-child .*--language python/],
    [["mcp", "--languages", "typescript,python", "--sessions-per-child", "2"], /--sessions-per-child .*--language python/],
    [["run", "--sessions-per-child", "0", "1"], /expected a number of sessions from 1 to 256/],
    [["run", "--remote", "http://127.0.0.1:9", "--sessions-per-child", "2", "1"], /--remote: the server decides how its sessions run; drop --sessions-per-child/],
    [["mcp", "--remote", "http://127.0.0.1:9", "--sessions-per-child", "2"], /--remote: the server decides how its sessions run; drop --sessions-per-child/],
    [["serve", "--no-auth", "--port", "0", "--workspace-header", "X-Workspace", "--sessions-per-child", "2"], /different tenants' sessions in one child/],
  ])("refuses %j with a usage error saying why", async (args, why) => {
    const r = await runCli(args, { cwd: dir, timeoutMs: 60_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(why);
  }, 120_000);

  it("project.json code_mode.sessions_per_child: the agent's run_code runs in a shared child", async () => {
    const project = await writeProject([{ name: "main", tools: ["code"] }], { code_mode: { base: ".code-mode", sessions_per_child: 4 } });
    try {
      // A shared child is started with TS_CODE_MODE_SHARED_CHILD=1; a child of its own is not.
      const model = scripted([{ tool: "run_code", args: { code: "process.env.TS_CODE_MODE_SHARED_CHILD ?? 'own child'" } }, { text: "done" }]);
      // The runtime closes the run's sessions when the run ends.
      await (await createRuntime(project, { model })).run("go");
      expect(toolResults(model.prompts[1]).join("\n")).toMatch(/--- value ---\n"?1"?/);
    } finally {
      await removeProject(project);
    }
  }, 120_000);

  it("project.json code_mode.sessions_per_child: refused with an executor other than subprocess, naming the key", async () => {
    const project = await writeProject([{ name: "main", tools: ["code"] }], { code_mode: { executor: "sandbox", sessions_per_child: 4 } });
    try {
      await expect(createRuntime(project)).rejects.toThrow(/sessions_per_child applies to executor "subprocess" with TypeScript only/);
    } finally {
      await removeProject(project);
    }
  });
});
