/** `ts-code-mode mcp` over stdio, driven by the SDK's Client the way Claude Code or Desktop would. */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  baseWithExampleTools,
  callTool,
  cleanup,
  connectStdio,
  ensureBuilt,
  EXAMPLE_TOOLS,
  structuredOf,
  tempDir,
  textOf,
  type StdioConnection,
} from "./harness.js";

let dir: string;
let conn: StdioConnection | undefined;

beforeAll(ensureBuilt);
beforeEach(async (ctx) => {
  dir = await tempDir();
  // A server that died says why on its stderr; show it with the failure.
  ctx.onTestFailed(() => {
    if (conn) process.stderr.write(`--- server stderr (${ctx.task.name}) ---\n${conn.stderr()}\n`);
  });
});
afterEach(async () => {
  if (conn && !sharedConns.has(conn)) await conn.close();
  conn = undefined;
  await cleanup(dir);
});

/**
 * One server per argument list for the tests that only read what their own calls did (no listing
 * of workflows or artifacts another test could have added): a cold `mcp` start is ~0.5 s each.
 * Each shared server works in a folder of its own, removed with it after the file.
 */
const shared = new Map<string, { conn: StdioConnection; dir: string }>();
const sharedConns = new Set<StdioConnection>();
async function sharedStdio(args: string[]): Promise<StdioConnection> {
  const key = args.join("\0");
  let entry = shared.get(key);
  if (!entry) {
    const own = await tempDir();
    entry = { conn: await connectStdio(args, { cwd: own }), dir: own };
    shared.set(key, entry);
    sharedConns.add(entry.conn);
  }
  return entry.conn;
}
afterAll(async () => {
  for (const { conn: c, dir: d } of shared.values()) {
    await c.close();
    await cleanup(d);
  }
});

const TRIPLE = `/** Triple a number with the echo tool's help. */
export async function run({ n }: { n: number }) {
  const out = await tools.echo.say({ text: [String(n * 3)] });
  return Number(out.trim());
}
`;

describe("mcp over stdio: the agent's round trip", () => {
  it("lists the tools, runs code that calls a tool and saves a workflow, finds it, runs it, deletes it", async () => {
    await baseWithExampleTools(dir);
    conn = await connectStdio(["--base", "base", "--surface", "full"], { cwd: dir });
    const { client } = conn;

    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual([
      "run_code",
      "list_tools",
      "search_tools",
      "describe_tool",
      "list_workflows",
      "search_workflows",
      "get_workflow",
      "create_workflow",
      "delete_workflow",
      "list_artifacts",
      "load_artifact",
      "list_deps",
      "add_dep",
      "remove_dep",
    ]);

    const run = await callTool(client, "run_code", {
      code: `const said = await tools.echo.say({ text: ["hello", "mcp"] });
await workflows.create({ name: "triple_echo", source: ${JSON.stringify(TRIPLE)}, description: "Triple a number and echo it" });
said.trim()`,
    });
    expect(run.isError).toBeFalsy();
    expect(textOf(run)).toBe("--- value ---\nhello mcp");
    expect(structuredOf(run)).toMatchObject({ ok: true, value: "hello mcp", display: "hello mcp", error: null, cutChars: 0 });

    const found = await callTool(client, "search_workflows", { query: "triple a number" });
    expect(structuredOf<{ workflows: Array<{ name: string }> }>(found).workflows[0]?.name).toBe("triple_echo");
    expect(textOf(found)).toContain("triple_echo({ n: number }) — Triple a number and echo it");

    // Variables persist between run_code calls, and the saved workflow is callable.
    const again = await callTool(client, "run_code", { code: "said.length + await workflows.triple_echo({ n: 5 })" });
    // said is "hello mcp\n" (10 characters).
    expect(structuredOf(again)).toMatchObject({ ok: true, value: 10 + 15 });

    const got = await callTool(client, "get_workflow", { name: "triple_echo" });
    expect(textOf(got)).toContain("tools.echo.say");
    expect(structuredOf<{ workflow: { params: unknown[] } }>(got).workflow.params).toEqual([{ name: "n", type: "number", required: true }]);

    const deleted = await callTool(client, "delete_workflow", { name: "triple_echo" });
    expect(structuredOf(deleted)).toEqual({ name: "triple_echo", deleted: true });
    const listed = await callTool(client, "list_workflows");
    expect(structuredOf(listed)).toEqual({ workflows: [] });
  });

  it("answers the discovery tools with text and the same data structured", async () => {
    conn = await connectStdio(["--tools", EXAMPLE_TOOLS, "--storage", "data", "--surface", "full"], { cwd: dir });
    const { client } = conn;
    const list = await callTool(client, "list_tools");
    const tools = structuredOf<{ tools: Array<{ name: string }> }>(list).tools.map((t) => t.name);
    expect(tools).toContain("echo");
    for (const name of tools) expect(textOf(list)).toContain(`\n${name} — `);
    expect(textOf(list)).toContain("tools.echo.say(args: { text: string[] }): Promise<string>");

    const search = await callTool(client, "search_tools", { query: "count lines words", limit: 2 });
    const hits = structuredOf<{ tools: Array<{ name: string; score: number }> }>(search).tools;
    expect(hits.length).toBeLessThanOrEqual(2);
    expect(hits[0]?.name).toBe("wc");

    const described = await callTool(client, "describe_tool", { name: "echo" });
    expect(textOf(described)).toContain("say(args: echo.SayArgs): Promise<string>;");
    expect(structuredOf(described)).toEqual({ name: "echo", declaration: textOf(described) });

    const unknown = await callTool(client, "describe_tool", { name: "ech" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/NotFoundError: .*ech.*Did you mean: echo/);
  });

  it("reports a missing workflow and a bad argument as tool errors, with suggestions", async () => {
    conn = await sharedStdio(["--base", "base", "--surface", "full"]);
    const { client } = conn;
    await callTool(client, "create_workflow", { name: "triple", source: "export async function run({ n }: { n: number }) { return n * 3; }" });
    const missing = await callTool(client, "get_workflow", { name: "tripel" });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('No workflow named "tripel". Did you mean: triple?');
    const badName = await callTool(client, "create_workflow", { name: "not a name", source: "export async function run() {}" });
    expect(badName.isError).toBe(true);
    expect(textOf(badName)).toMatch(/InvalidNameError/);
    const badLimit = await callTool(client, "search_tools", { query: "x", limit: 0 });
    expect(badLimit.isError).toBe(true);
    expect(textOf(badLimit)).toMatch(/limit/);
  });

  it("loads artifacts: text as text, JSON as JSON, bytes as base64 with a short summary", async () => {
    conn = await connectStdio(["--base", "base", "--surface", "full"], { cwd: dir });
    const { client } = conn;
    const saved = await callTool(client, "run_code", {
      code: `await artifacts.save("notes.txt", "plain words", { description: "notes" });
await artifacts.save("data.json", { hosts: 3 });
await artifacts.save("blob.bin", new Uint8Array([0, 1, 2, 250, 255]));
(await artifacts.list()).length`,
    });
    expect(structuredOf(saved)).toMatchObject({ ok: true, value: 3 });

    const listed = await callTool(client, "list_artifacts");
    expect(textOf(listed)).toContain("blob.bin  bytes  5 bytes");

    const text = await callTool(client, "load_artifact", { name: "notes.txt" });
    expect(textOf(text)).toBe('text artifact "notes.txt", 11 bytes — notes:\nplain words');
    expect(structuredOf(text)).toMatchObject({ text: "plain words", artifact: { kind: "text", size: 11 } });

    const json = await callTool(client, "load_artifact", { name: "data.json" });
    expect(structuredOf(json)).toMatchObject({ json: { hosts: 3 }, artifact: { kind: "json" } });

    const bytes = await callTool(client, "load_artifact", { name: "blob.bin" });
    expect(textOf(bytes)).toBe('bytes artifact "blob.bin", 5 bytes. The data is in the structured result as base64.');
    expect(structuredOf(bytes)).toMatchObject({ base64: Buffer.from([0, 1, 2, 250, 255]).toString("base64"), artifact: { kind: "bytes", size: 5 } });

    const missing = await callTool(client, "load_artifact", { name: "blob.bim" });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("Did you mean: blob.bin?");
  });
});

describe("mcp over stdio: the server outlives the agent's code", () => {
  it("keeps serving after process.exit(1) and after a sync infinite loop stopped by timeout_ms", async () => {
    conn = await connectStdio(["--base", "base"], { cwd: dir });
    const { client } = conn;
    const exited = await callTool(client, "run_code", { code: "process.exit(1)" });
    expect(exited.isError).toBe(true);
    expect(structuredOf(exited)).toMatchObject({ ok: false, error: { name: "ExecutorCrashError" } });
    expect(textOf(exited)).toMatch(/^--- error ---\nExecutorCrashError: /);

    const looped = await callTool(client, "run_code", { code: "while (true) {}", timeout_ms: 300 });
    expect(looped.isError).toBe(true);
    expect(structuredOf(looped)).toMatchObject({ ok: false, error: { name: "TimeoutError" } });

    const asyncLoop = await callTool(client, "run_code", { code: "await new Promise((r) => setTimeout(r, 1)); while (true) {}", timeout_ms: 300 });
    expect(structuredOf(asyncLoop)).toMatchObject({ ok: false, error: { name: "TimeoutError" } });

    const next = await callTool(client, "run_code", { code: "6 * 7" });
    expect(next.isError).toBeFalsy();
    expect(structuredOf(next)).toMatchObject({ ok: true, value: 42 });
  });

  it("with --executor in-process: survives a floating rejected promise and a throwing timer in agent code", async () => {
    conn = await sharedStdio(["--base", "base", "--executor", "in-process"]);
    const r = await callTool(conn.client, "run_code", {
      code: 'Promise.reject(new Error("floating")); setTimeout(() => { throw new Error("from a timer"); }, 5); await new Promise((r) => setTimeout(r, 50)); "ran"',
    });
    expect(structuredOf(r)).toMatchObject({ ok: true, value: "ran" });
    const next = await callTool(conn.client, "run_code", { code: "3 * 3" });
    expect(structuredOf(next)).toMatchObject({ ok: true, value: 9 });
    // The in-process executor reports both to the agent, on the run's stderr (issue 13, principle 8).
    const reported = `${structuredOf<{ stderr: string }>(r).stderr}${structuredOf<{ stderr: string }>(next).stderr}`;
    expect(reported).toContain("Unhandled promise rejection: Error: floating");
    expect(reported).toContain("Uncaught exception (outside the awaited code, e.g. thrown from a timer): Error: from a timer");
  });

  it("rejects a timeout_ms that is not a positive whole number", async () => {
    conn = await sharedStdio(["--base", "base"]);
    const r = await callTool(conn.client, "run_code", { code: "1", timeout_ms: -5 });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/timeout_ms/);
  });
});

describe("mcp over stdio: output", () => {
  it("cuts long output at --max-output with a marker saying how much was cut, keeping the error", async () => {
    conn = await connectStdio(["--base", "base", "--max-output", "2000"], { cwd: dir });
    const r = await callTool(conn.client, "run_code", { code: 'console.log("x".repeat(50000)); throw new Error("the end")' });
    const text = textOf(r);
    expect(r.isError).toBe(true);
    expect(text.length).toBeLessThanOrEqual(2000);
    expect(text).toMatch(/\[… [\d,]+ characters cut …\]/);
    expect(text).toMatch(/\[output cut to 2,000 characters \(--max-output\): [\d,]+ characters left out/);
    expect(text).toContain("--- error ---\nError: the end");
    const s = structuredOf<{ stdout: string; cutChars: number }>(r);
    expect(s.cutChars).toBeGreaterThan(48_000);
    expect(s.stdout.length).toBeLessThan(2000);
  });

  it("labels value, stdout, stderr and error sections and leaves out empty ones", async () => {
    conn = await sharedStdio(["--base", "base"]);
    const r = await callTool(conn.client, "run_code", { code: 'console.log("out"); console.error("err"); ({ a: 1 })' });
    expect(textOf(r)).toBe("--- value ---\n{ a: 1 }\n--- stdout ---\nout\n\n--- stderr ---\nerr\n");
    const quiet = await callTool(conn.client, "run_code", { code: "let nothing = 1;" });
    expect(textOf(quiet)).toBe("(no value and no output)");
  });

  it("keeps the protocol stream clean when the agent's code prints a lot", async () => {
    conn = await sharedStdio(["--base", "base"]);
    const noisy = await callTool(conn.client, "run_code", {
      code: 'for (let i = 0; i < 2000; i++) console.log("line", i, "{\\"jsonrpc\\":\\"2.0\\"}"); process.stdout.write("raw\\n"); "done"',
    });
    expect(structuredOf(noisy)).toMatchObject({ ok: true, value: "done" });
    expect(structuredOf<{ stdout: string }>(noisy).stdout).toContain("line 1999");
    const after = await callTool(conn.client, "run_code", { code: "1 + 1" });
    expect(structuredOf(after)).toMatchObject({ ok: true, value: 2 });
    expect((await conn.client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("with --executor in-process: console is captured and process.stdout.write is diverted to stderr", async () => {
    conn = await sharedStdio(["--base", "base", "--executor", "in-process"]);
    const r = await callTool(conn.client, "run_code", {
      code: 'console.log("captured"); process.stdout.write("MARKER-not-protocol\\n"); "ok"',
    });
    expect(structuredOf(r)).toMatchObject({ ok: true, value: "ok", stdout: "captured\n" });
    const after = await callTool(conn.client, "run_code", { code: "2 + 2" });
    expect(structuredOf(after)).toMatchObject({ ok: true, value: 4 });
    expect(conn.stderr()).toContain("MARKER-not-protocol");
    expect(conn.stderr()).toContain("--executor in-process");
  });
});

describe("mcp over stdio: deps", () => {
  // No test here installs anything: that would reach the npm registry.
  it("offers add_dep/remove_dep with --surface full and runs the host's deps operations", async () => {
    conn = await sharedStdio(["--base", "base", "--surface", "full"]);
    const names = (await conn.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["list_deps", "add_dep", "remove_dep"]));
    const bad = await callTool(conn.client, "add_dep", { spec: "Not A Spec!" });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^ValidationError: deps\.add: /);
    const removed = await callTool(conn.client, "remove_dep", { spec: "left-pad" });
    expect(removed.isError).toBeFalsy();
    expect(structuredOf(removed)).toMatchObject({ spec: "left-pad", result: { removed: false } });
    expect(structuredOf(await callTool(conn.client, "list_deps"))).toEqual({ deps: [] });
  });

  it("with --no-runtime-deps: no add_dep/remove_dep, and deps.add in run_code is refused too", async () => {
    conn = await connectStdio(["--base", "base", "--no-runtime-deps", "--surface", "full"], { cwd: dir });
    const names = (await conn.client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("list_deps");
    expect(names).not.toContain("add_dep");
    expect(names).not.toContain("remove_dep");
    const r = await callTool(conn.client, "run_code", { code: 'await deps.add("left-pad")' });
    expect(structuredOf(r)).toMatchObject({ ok: false });
    expect(textOf(r)).toMatch(/deps\.add: .*disabled/);
  });
});
