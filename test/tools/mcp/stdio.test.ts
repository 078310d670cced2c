/**
 * The MCP adapter over stdio against our fixture server (a real child process), reached the way an
 * agent reaches it: tool YAML in a folder → executor → Session → `tools.math.<tool>(args)`.
 * Server pids come from the fixture's own `pid` tool, so process checks see the real server.
 */
import { mkdir, mkdtemp, readFile, realpath } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../../src/execution/in-process/executor.js";
import { SubprocessExecutor } from "../../../src/execution/subprocess/executor.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import { NODE, fixtureTool, isAlive, removeDir, toolsDir, typeErrors, waitFor } from "./helpers.js";

const dirs: string[] = [];
const sessions: Session[] = [];

async function openSession(tools: Record<string, Record<string, unknown>>, kind: "in-process" | "subprocess" = "in-process"): Promise<Session> {
  const toolsPath = await toolsDir(tools);
  const storagePath = await mkdtemp(path.join(os.tmpdir(), "tcm-mcp-store-"));
  dirs.push(toolsPath, storagePath);
  const executor = kind === "in-process" ? new InProcessExecutor({ toolsPath, defaultTimeoutMs: 20_000 }) : new SubprocessExecutor({ toolsPath, defaultTimeoutMs: 20_000 });
  const session = new Session({ storage: new FileStorage({ basePath: storagePath }), executor });
  sessions.push(session);
  await session.start();
  return session;
}

/** Run `code`; return its value, failing the test with the error when the run failed. */
async function value(session: Session, code: string): Promise<unknown> {
  const r = await session.run(code);
  if (!r.ok) throw new Error(`run failed: ${r.error?.name}: ${r.error?.message}`);
  return r.value;
}

/** Run `code` that must throw; return the thrown error's name, message and ToolError fields. */
async function thrown(session: Session, code: string): Promise<Record<string, unknown>> {
  const r = await session.run(
    `await (async () => { try { ${code}; return "no error"; } catch (e) { return { name: e.name, message: e.message, code: e.code, recoverable: e.recoverable, stderr: e.stderr }; } })()`,
  );
  if (!r.ok) throw new Error(`run failed: ${r.error?.message}`);
  expect(r.value).not.toBe("no error");
  return r.value as Record<string, unknown>;
}

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map(removeDir));
});

describe("an MCP server over stdio, through a Session", () => {
  let session: Session;
  let shared: { session: Session; toolsPath: string; storagePath: string } | null = null;

  // Discovery and plain calls share one server; the lifecycle tests below open their own.
  beforeAll(async () => {
    const toolsPath = await toolsDir({ math: fixtureTool("math", { timeout: 10 }) });
    const storagePath = await mkdtemp(path.join(os.tmpdir(), "tcm-mcp-store-"));
    const s = new Session({ storage: new FileStorage({ basePath: storagePath }), executor: new InProcessExecutor({ toolsPath, defaultTimeoutMs: 20_000 }) });
    await s.start();
    shared = { session: s, toolsPath, storagePath };
    session = s;
  });
  afterAll(async () => {
    await shared?.session.close();
    await removeDir(shared?.toolsPath);
    await removeDir(shared?.storagePath);
  });

  it("calls a tool that returns structuredContent", async () => {
    expect(await value(session, "await tools.math.add({ a: 2, b: 3 })")).toEqual({ sum: 5 });
  });

  it("calls a tool whose name is not an identifier", async () => {
    expect(await value(session, 'await tools.math["get-weather"]({ city: "Oslo" })')).toBe("Sunny in Oslo");
  });

  it("unwraps JSON text, plain text (joined), non-JSON text and images", async () => {
    expect(await value(session, 'await tools.math.echo_json({ message: "hi", tags: ["a"], options: { depth: 2 } })')).toEqual({
      echoed: { message: "hi", count: 1, tags: ["a"], options: { depth: 2 } },
    });
    expect(await value(session, 'await tools.math.plain({ name: "agent" })')).toBe("hello agent\nsecond line");
    expect(await value(session, "await tools.math.not_json()")).toBe("{ not json");
    const image = (await value(session, "await tools.math.image()")) as Array<Record<string, unknown>>;
    expect(image.map((c) => c["type"])).toEqual(["image", "text"]);
    expect(image[0]).toMatchObject({ mimeType: "image/png" });
  });

  it("lists the server's tools with signatures", async () => {
    const list = (await value(session, "await tools.list()")) as Array<{ name: string; type: string; description: string; tags: string[]; direct: unknown; callables: Array<{ name: string; signature: string; description: string }> }>;
    const math = list.find((t) => t.name === "math")!;
    expect(math).toMatchObject({ type: "mcp", description: "Fixture math server", tags: ["math", "test"], direct: null });
    const sig = Object.fromEntries(math.callables.map((c) => [c.name, c.signature]));
    expect(sig["add"]).toBe("add(args: { a: number; b: number }): Promise<{ sum: number }>");
    expect(sig["get-weather"]).toBe("get-weather(args: { city: string }): Promise<unknown>");
    expect(sig["echo_json"]).toBe(
      'echo_json(args: { message: string; count?: number; mode?: "loud" | "quiet"; tags?: string[]; options?: { depth: number; label?: string } }): Promise<unknown>',
    );
    expect(sig["pid"]).toBe("pid(): Promise<{ pid: number }>");
    expect(math.callables.find((c) => c.name === "add")?.description).toBe("Add two numbers");
    const found = (await value(session, 'await tools.search("weather city")')) as Array<{ name: string }>;
    expect(found[0]?.name).toBe("math");
  });

  it("describes the server as TypeScript that compiles and type-checks calls", async () => {
    const text = (await value(session, 'await tools.describe("math")')) as string;
    expect(text).toContain('"get-weather"(args: math.GetWeatherArgs): Promise<unknown>;');
    expect(text).toContain("/** Add two numbers */\n    add(args: math.AddArgs): Promise<{ sum: number }>;");
    expect(text).toContain("pid(): Promise<{ pid: number }>;");
    const usage = `
      async function demo(): Promise<number> {
        const r = await tools.math.add({ a: 2, b: 3 });
        await tools.math["get-weather"]({ city: "Oslo" });
        await tools.math.echo_json({ message: "m", mode: "loud", options: { depth: 1 } });
        const p = await tools.math.pid();
        return r.sum + p.pid;
      }
      void demo;`;
    expect(typeErrors(text + usage)).toEqual([]);
    expect(typeErrors(`${text}\nvoid tools.math.add({ a: "2", b: 3 });`).length).toBeGreaterThan(0);
    expect(typeErrors(`${text}\nvoid tools.math.echo_json({ message: "m", mode: "shout" });`).length).toBeGreaterThan(0);
  });

  it("suggests the closest tool for an unknown one", async () => {
    const e = await thrown(session, "await tools.math.ad({ a: 1, b: 2 })");
    expect(e["name"]).toBe("NotFoundError");
    expect(e["message"]).toMatch(/^tools\.math\.ad: Unknown tool 'ad' of tool 'math'\. Did you mean: add/);
  });

  it("validates arguments before the call reaches the server", async () => {
    const before = ((await value(session, "await tools.math.calls()")) as { count: number }).count;
    const unknown = await thrown(session, "await tools.math.add({ a: 1, b: 2, c: 3 })");
    expect(unknown).toMatchObject({ name: "ToolError", code: "INVALID_INPUT", recoverable: true });
    expect(unknown["message"]).toMatch(/^tools\.math\.add: Unknown argument 'c'\..* Accepted: a, b\.$/);
    const wrongType = await thrown(session, 'await tools.math.add({ a: "1", b: 2 })');
    expect(wrongType).toMatchObject({ code: "INVALID_INPUT", message: expect.stringMatching(/'a' expected number, got string "1"/) });
    const missing = await thrown(session, "await tools.math.add({ a: 1 })");
    expect(missing).toMatchObject({ code: "MISSING_PARAM", message: expect.stringMatching(/^tools\.math\.add: Missing required argument 'b' \(Second addend\)/) });
    const nested = await thrown(session, 'await tools.math.echo_json({ message: "m", options: { depth: "deep" } })');
    expect(nested).toMatchObject({ code: "INVALID_INPUT", message: expect.stringMatching(/'options\.depth' expected integer/) });
    const enumBad = await thrown(session, 'await tools.math.echo_json({ message: "m", mode: "shout" })');
    expect(enumBad["message"]).toMatch(/'mode' expected one of "loud", "quiet"/);
    const after = ((await value(session, "await tools.math.calls()")) as { count: number }).count;
    expect(after).toBe(before + 1); // only the first `calls()` itself
  });

  it("turns isError into a ToolError with the server's text", async () => {
    const e = await thrown(session, 'await tools.math.fail({ message: "the disk is on fire" })');
    expect(e).toMatchObject({ name: "ToolError", code: "INTERNAL", recoverable: false });
    expect(e["message"]).toBe("tools.math.fail failed: the disk is on fire");
    const perm = await thrown(session, 'await tools.math.fail({ message: "Permission denied: /etc/shadow" })');
    expect(perm["code"]).toBe("PERMISSION");
  });

  it("has no escape hatch: tools.math(args) says to call one of its tools", async () => {
    const e = await thrown(session, "await tools.math({ a: 1 })");
    expect(e["message"]).toMatch(/Tool 'math' cannot be called directly; call one of its tools: tools\.math\.add\(\.\.\.\)/);
  });

  it("shares one server between concurrent calls", async () => {
    const r = (await value(session, "await Promise.all([1, 2, 3, 4, 5].map(async (n) => [(await tools.math.add({ a: n, b: n })).sum, (await tools.math.pid()).pid]))")) as Array<[number, number]>;
    expect(r.map(([s]) => s)).toEqual([2, 4, 6, 8, 10]);
    expect(new Set(r.map(([, p]) => p)).size).toBe(1);
  });
});

describe("tools added at run time", () => {
  it("picks up a tool the server announces with tools/list_changed", async () => {
    const session = await openSession({ math: fixtureTool("math") });
    const names = async () => (await session.listTools())[0]!.callables.map((c) => c.name);
    expect(await names()).not.toContain("late_tool");
    expect(await value(session, 'await tools.math.grow({ name: "late_tool" })')).toBe("added late_tool");
    const until = Date.now() + 10_000;
    while (!(await names()).includes("late_tool")) {
      if (Date.now() > until) throw new Error("late_tool never appeared in tools.list()");
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await value(session, "await tools.math.late_tool()")).toBe("I am late_tool");
  });
});

describe("timeouts and cancellation", () => {
  let registry: ToolRegistry;
  let dir: string;
  beforeAll(async () => {
    dir = await toolsDir({ math: fixtureTool("math", { timeout: 0.5 }) });
    registry = await ToolRegistry.load(dir);
  });
  afterAll(async () => {
    await registry.close();
    await removeDir(dir);
  });

  it("stops a call at the YAML timeout with TIMEOUT, and the server keeps serving", async () => {
    const { pid } = (await registry.call("math", "pid", {})) as { pid: number };
    await expect(registry.call("math", "slow", { ms: 3_000 })).rejects.toMatchObject({
      name: "ToolError",
      code: "TIMEOUT",
      message: expect.stringMatching(/^tools\.math\.slow timed out after 500 ms/),
    });
    expect(await registry.call("math", "pid", {})).toEqual({ pid });
  });

  it("uses the caller's smaller budget (ctx.timeoutMs)", async () => {
    await expect(registry.call("math", "slow", { ms: 3_000 }, { timeoutMs: 100 })).rejects.toMatchObject({ code: "TIMEOUT", message: expect.stringMatching(/after 100 ms/) });
    expect(await registry.call("math", "slow", { ms: 10 }, { timeoutMs: 5_000 })).toBe("waited 10");
  });

  it("honours ctx.signal", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("run stopped")), 50);
    await expect(registry.call("math", "slow", { ms: 3_000 }, { signal: controller.signal })).rejects.toMatchObject({
      code: "INTERNAL",
      message: "tools.math.slow was aborted: run stopped",
    });
    const timedOut = new AbortController();
    timedOut.abort(new DOMException("deadline", "TimeoutError"));
    await expect(registry.call("math", "add", { a: 1, b: 1 }, { signal: timedOut.signal })).rejects.toMatchObject({ code: "TIMEOUT" });
  });

  it("a run's timeout stops a slow MCP call", async () => {
    const session = await openSession({ math: fixtureTool("math") });
    const r = await session.run("await tools.math.slow({ ms: 5000 })", { timeoutMs: 300 });
    expect(r.ok).toBe(false);
    expect(r.error?.name).toMatch(/TimeoutError|ToolError/);
  });
});

describe("server lifecycle", () => {
  it("restarts a server that died between calls", async () => {
    const session = await openSession({ math: fixtureTool("math") });
    const first = ((await value(session, "await tools.math.pid()")) as { pid: number }).pid;
    process.kill(first, "SIGKILL");
    await waitFor(() => !isAlive(first), "the killed server to exit");
    const second = ((await value(session, "await tools.math.pid()")) as { pid: number }).pid;
    expect(second).not.toBe(first);
    expect(await value(session, "(await tools.math.add({ a: 1, b: 1 })).sum")).toBe(2);
  });

  it("retries once on a new server when the server dies during the call", async () => {
    const session = await openSession({ math: fixtureTool("math") });
    const marker = path.join(dirs[0]!, "crashed-once");
    const first = ((await value(session, "await tools.math.pid()")) as { pid: number }).pid;
    expect(await value(session, `await tools.math.crash({ marker: ${JSON.stringify(marker)} })`)).toBe("survived");
    expect(Number(await readFile(marker, "utf8"))).toBe(first);
    const second = ((await value(session, "await tools.math.pid()")) as { pid: number }).pid;
    expect(second).not.toBe(first);
    expect(isAlive(first)).toBe(false);
  });

  it("gives up with DEPENDENCY when the server dies again after the restart, and recovers afterwards", async () => {
    const session = await openSession({ math: fixtureTool("math") });
    const e = await thrown(session, "await tools.math.crash()");
    expect(e).toMatchObject({ name: "ToolError", code: "DEPENDENCY" });
    expect(e["message"]).toMatch(/tools\.math\.crash: the MCP server 'math' \(command '.*server\.mjs'\) closed the connection during the call, and again after it was restarted/);
    expect(await value(session, "(await tools.math.add({ a: 20, b: 22 })).sum")).toBe(42);
  });

  it("close() ends the server process", async () => {
    const session = await openSession({ math: fixtureTool("math") });
    const pid = ((await value(session, "await tools.math.pid()")) as { pid: number }).pid;
    expect(isAlive(pid)).toBe(true);
    await session.close();
    await waitFor(() => !isAlive(pid), `server ${pid} to exit after close`);
    const r = await session.run("await tools.math.pid()");
    expect(r.ok).toBe(false);
  });

  it("starts nothing until the first use", async () => {
    const dir = await toolsDir({ math: fixtureTool("math", { args: [path.join(os.tmpdir(), "tcm-does-not-exist.mjs")] }) });
    dirs.push(dir);
    const registry = await ToolRegistry.load(dir);
    expect(registry.names()).toEqual(["math"]);
    await registry.close();
  });

  it("a server that fails to start is a DEPENDENCY error naming the command, with its stderr", async () => {
    const script = "console.error('boom: config file missing, key=' + process.env.MY_KEY); process.exit(3)";
    const prev = process.env["TCM_MCP_TEST_SECRET"];
    process.env["TCM_MCP_TEST_SECRET"] = "sekrit-value-123";
    try {
      const session = await openSession({ broken: { name: "broken", type: "mcp", command: NODE, args: ["-e", script], env: { MY_KEY: "${TCM_MCP_TEST_SECRET}" } } });
      const e = await thrown(session, "await tools.broken.anything()");
      expect(e).toMatchObject({ name: "ToolError", code: "DEPENDENCY" });
      const msg = e["message"] as string;
      expect(msg).toContain(`MCP server 'broken' (command '${NODE} -e console.error(`);
      expect(msg).toMatch(/could not be started: the server exited \(or closed the connection\) before completing the MCP handshake; stderr: boom: config file missing, key=\*\*\*/);
      expect(msg).not.toContain("sekrit-value-123");
      expect(e["stderr"]).toBe("boom: config file missing, key=***");
    } finally {
      if (prev === undefined) delete process.env["TCM_MCP_TEST_SECRET"];
      else process.env["TCM_MCP_TEST_SECRET"] = prev;
    }
  });

  it("an executable that does not exist is named", async () => {
    const session = await openSession({ ghost: { name: "ghost", type: "mcp", command: "tcm-no-such-mcp-server" } });
    // Discovery still works and shows why the tool is unavailable; calling it names the problem.
    const listed = await session.run("(await tools.list()).map((t) => [t.name, t.description])");
    expect(listed.value).toEqual([["ghost", expect.stringMatching(/^\(unavailable: .*the executable 'tcm-no-such-mcp-server' was not found on PATH/)]]);
    const e = await thrown(session, "await tools.ghost.anything({})");
    expect(e).toMatchObject({ code: "DEPENDENCY", message: expect.stringMatching(/the executable 'tcm-no-such-mcp-server' was not found on PATH/) });
  });
});

describe("environment and working directory", () => {
  it("passes the YAML env over a minimal environment, and runs in the YAML file's folder by default", async () => {
    process.env["TCM_MCP_TEST_LEAK"] = "must-not-reach-the-server";
    process.env["TCM_MCP_TEST_GIVEN"] = "given-on-purpose";
    try {
      const session = await openSession({ math: fixtureTool("math", { env: { FROM_YAML: "${TCM_MCP_TEST_GIVEN}", PLAIN: "x" } }) });
      const env = async (name: string) => ((await value(session, `await tools.math.env({ name: ${JSON.stringify(name)} })`)) as { value: string | null }).value;
      expect(await env("FROM_YAML")).toBe("given-on-purpose");
      expect(await env("PLAIN")).toBe("x");
      expect(await env("TCM_MCP_TEST_LEAK")).toBeNull();
      expect(await env("PATH")).toBe(process.env["PATH"]);
      const toolsPath = dirs[0]!;
      expect(await value(session, "await tools.math.cwd()")).toBe(await realpath(toolsPath));
    } finally {
      delete process.env["TCM_MCP_TEST_LEAK"];
      delete process.env["TCM_MCP_TEST_GIVEN"];
    }
  });

  it("resolves cwd relative to the YAML file's folder, and names a missing one", async () => {
    const session = await openSession({ math: fixtureTool("math", { cwd: "sub/dir" }) });
    const toolsPath = dirs[dirs.length - 2]!;
    // Nothing has started yet (lazy), so the folder can still be missing at this point.
    const e = await thrown(session, "await tools.math.cwd()");
    expect(e).toMatchObject({ code: "DEPENDENCY", message: expect.stringContaining(`the working directory '${path.join(toolsPath, "sub", "dir")}' does not exist`) });
    await mkdir(path.join(toolsPath, "sub", "dir"), { recursive: true });
    expect(await value(session, "await tools.math.cwd()")).toBe(await realpath(path.join(toolsPath, "sub", "dir")));
  });
});

describe("SubprocessExecutor end to end", () => {
  it("calls an MCP tool from the child process and closes the server with the session", async () => {
    const session = await openSession({ math: fixtureTool("math") }, "subprocess");
    expect(await value(session, "(await tools.math.add({ a: 2, b: 3 })).sum")).toBe(5);
    expect(await value(session, 'await tools.math["get-weather"]({ city: "Lima" })')).toBe("Sunny in Lima");
    const e = await thrown(session, "await tools.math.fail()");
    expect(e).toMatchObject({ name: "ToolError", code: "INTERNAL", message: "tools.math.fail failed: something went wrong" });
    const pid = ((await value(session, "await tools.math.pid()")) as { pid: number }).pid;
    await session.close();
    await waitFor(() => !isAlive(pid), `server ${pid} to exit after close`);
  });
});
