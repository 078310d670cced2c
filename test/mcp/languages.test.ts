/**
 * `mcp --languages typescript,python`: run_code takes a per-call `language`; the default language's
 * session starts with the server, the other's Python (or TypeScript) process only on the first call
 * that asks for it, and it ends with the server (stdio) or the MCP session (HTTP). Both run on one
 * store. Real CLI, real MCP SDK client, real python3.
 */
import { execFileSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { callTool, cleanup, connectHttp, connectStdio, ensureBuilt, isAlive, runCli, startHttpServer, structuredOf, tempDir, waitUntil, type HttpServerProcess, type StdioConnection } from "./harness.js";

/** The same budget as test/mcp/disclosure.test.ts: the default surface with both languages must still fit. */
const FOOTPRINT_BUDGET = 4_000;

let dir: string;
let tools: string;
const open: StdioConnection[] = [];
const servers: HttpServerProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
  dir = await tempDir();
  tools = path.join(dir, "tools");
  await mkdir(tools);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

afterAll(async () => {
  await cleanup(dir);
});

/** Pids of the processes below `pid` whose command line runs the Python guest runtime. */
function pythonGuestsUnder(pid: number): number[] {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((r) => r.length >= 3)
    .map(([p, pp, ...args]) => ({ pid: Number(p), ppid: Number(pp), args: args.join(" ") }));
  const below = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rows) {
      if (below.has(r.ppid) && !below.has(r.pid)) {
        below.add(r.pid);
        grew = true;
      }
    }
  }
  return rows.filter((r) => r.pid !== pid && below.has(r.pid) && r.args.includes("guest/runtime.py")).map((r) => r.pid);
}

async function connect(args: string[]): Promise<StdioConnection> {
  const conn = await connectStdio(["--tools", tools, ...args], { cwd: dir });
  open.push(conn);
  return conn;
}

const run = async (conn: StdioConnection, code: string, language?: string) =>
  structuredOf<{ ok: boolean; value: unknown; error?: { message: string } }>(await callTool(conn.client, "run_code", { code, ...(language ? { language } : {}) }));

describe("mcp --languages typescript,python", () => {
  it("run_code takes language; TypeScript by default; Python starts on its first call, shares the store, and ends with the server; within the footprint budget", async () => {
    const conn = await connect(["--storage", path.join(dir, "both"), "--languages", "typescript,python"]);
    const listed = await conn.client.listTools();
    const runCode = listed.tools.find((t) => t.name === "run_code")!;
    expect((runCode.inputSchema.properties as Record<string, { enum?: string[] }>)["language"]?.enum).toEqual(["typescript", "python"]);
    expect(runCode.description).toMatch(/With language: "python", code is Python/);
    expect(JSON.stringify(listed).length + (conn.client.getInstructions() ?? "").length).toBeLessThanOrEqual(FOOTPRINT_BUDGET);

    expect(await run(conn, "const n: number = 20; n + 1")).toMatchObject({ ok: true, value: 21 });
    expect(pythonGuestsUnder(conn.pid!)).toEqual([]);
    const py = await run(conn, "import os, sys\n(os.getpid(), sys.version_info[0])", "python");
    expect(py).toMatchObject({ ok: true, value: [expect.any(Number), 3] });
    const pyPid = (py.value as number[])[0]!;
    expect(pythonGuestsUnder(conn.pid!)).toContain(pyPid);
    // Each language keeps its own globals; both work on one store.
    expect(await run(conn, "x = 5\nx * 2", "python")).toMatchObject({ value: 10 });
    expect(await run(conn, "x + 1", "python")).toMatchObject({ value: 6 });
    expect(await run(conn, "n", "typescript")).toMatchObject({ value: 20 });
    const source = 'def run(n: int) -> int:\n    """Triple a number."""\n    return n * 3\n';
    expect(await run(conn, `workflows.create(name="triple", source=${JSON.stringify(source)}, language="python")["params"]`, "python")).toMatchObject({
      ok: true,
      value: [{ name: "n", type: "int", required: true }],
    });
    expect(await run(conn, "(await workflows.list()).map((w) => [w.name, w.language, w.description])")).toMatchObject({ value: [["triple", "python", "Triple a number."]] });

    await conn.close();
    await waitUntil(() => !isAlive(pyPid), "the Python process to end with the server");
  }, 60_000);

  it("--language python makes Python the default; language: typescript runs TypeScript", async () => {
    const conn = await connect(["--storage", path.join(dir, "py"), "--languages", "typescript,python", "--language", "python"]);
    const runCode = (await conn.client.listTools()).tools.find((t) => t.name === "run_code")!;
    expect(runCode.description).toMatch(/^Run Python/);
    expect(runCode.description).toMatch(/With language: "typescript", code is TypeScript/);
    expect(await run(conn, "sum([1, 2, 3])")).toMatchObject({ ok: true, value: 6 });
    expect(await run(conn, "[1, 2, 3].reduce((a, b) => a + b)", "typescript")).toMatchObject({ ok: true, value: 6 });
  }, 60_000);

  it("create_workflow (--surface full) takes language: python, and the workflow is checked and read by python3 like one from a Python guest", async () => {
    const conn = await connect(["--storage", path.join(dir, "full"), "--surface", "full"]);
    const source = 'def run(n: int, k: int = 2) -> int:\n    """Scale a number."""\n    return n * k\n';
    const created = structuredOf<{ workflow: unknown }>(await callTool(conn.client, "create_workflow", { name: "scale", source, language: "python" }));
    expect(created.workflow).toMatchObject({ language: "python", description: "Scale a number.", params: [{ name: "n", required: true }, { name: "k", default: 2 }] });
    const bad = await callTool(conn.client, "create_workflow", { name: "bad", source: "def run(:\n", language: "python" });
    expect(bad.isError).toBe(true);
  });

  it("create_workflow on a Python server saves Python when no language is given (as a Python guest's workflows.create does)", async () => {
    const conn = await connect(["--storage", path.join(dir, "py-default"), "--surface", "full", "--language", "python"]);
    const created = structuredOf<{ workflow: unknown }>(await callTool(conn.client, "create_workflow", { name: "twice", source: "def run(n: int) -> int:\n    return n * 2\n" }));
    expect(created.workflow).toMatchObject({ language: "python", params: [{ name: "n", required: true }] });
  });

  it("a one-language server offers no language argument", async () => {
    const conn = await connect(["--storage", path.join(dir, "one")]);
    const runCode = (await conn.client.listTools()).tools.find((t) => t.name === "run_code")!;
    expect(Object.keys(runCode.inputSchema.properties ?? {})).toEqual(["code", "timeout_ms"]);
  });

  it.each([
    [["--languages", "ruby"], /unknown language in "ruby"/],
    [["--languages", "python,python"], /listed twice/],
    [["--languages", "typescript", "--language", "python"], /--language python is the default of --languages, so it must be one of them/],
    [["--languages", "typescript,python", "--executor", "in-process"], /--language python runs with --executor subprocess .*or --executor sandbox/],
  ])("refuses %j as a usage error", async (args, message) => {
    const r = await runCli(["mcp", "--tools", tools, "--storage", path.join(dir, "bad"), ...args], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("over HTTP, each MCP session's Python process ends with that session", async () => {
    const server = await startHttpServer(["--tools", tools, "--storage", path.join(dir, "http"), "--languages", "typescript,python", "--http", "0"], { cwd: dir });
    servers.push(server);
    const client = await connectHttp(server.url);
    const r = structuredOf<{ value: number }>(await callTool(client, "run_code", { code: "import os\nos.getpid()", language: "python" }));
    expect(isAlive(r.value)).toBe(true);
    // DELETE ends the MCP session, and with it both of its sessions.
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    await client.close();
    await waitUntil(() => !isAlive(r.value), "the Python process to end with its MCP session");
  }, 60_000);
});
