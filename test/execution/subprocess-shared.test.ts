/**
 * SubprocessExecutor({ sharedChild }): several sessions, each in its own context, in one child
 * (issue 42 item 4). The conformance suite runs against it; the rest checks what sharing changes:
 * what one session sees of another, what a timeout or a busy loop in one does to the others,
 * reset/close freeing only their own context, the per-child cap, and per-session output.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { SharedChildren } from "../../src/execution/subprocess/shared-children.js";
import { PythonExecutor } from "../../src/execution/python/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { executorConformance } from "../conformance/executor.js";
import { waitFor } from "../helpers/processes.js";
import { isAlive as pidAlive } from "../mcp/harness.js";
import { EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";

const REPO = path.resolve(import.meta.dirname, "..", "..");

// Four sessions a child: the suite's sessions fill several children, as a busy host's would.
const suiteChildren = new SharedChildren({ sessionsPerChild: 4 });
afterAll(() => suiteChildren.close());
executorConformance("SubprocessExecutor (sharedChild)", (opts) => new SubprocessExecutor({ ...opts, sharedChild: suiteChildren }));

const isAlive = (pid: number | undefined): boolean => pid !== undefined && pidAlive(pid);

describe("SubprocessExecutor with a shared child", () => {
  let dir: string;
  let shared: SharedChildren;
  const sessions: Session[] = [];

  async function open(): Promise<Session> {
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SubprocessExecutor({ defaultTimeoutMs: 20_000, sharedChild: shared }) });
    sessions.push(session);
    await session.start();
    return session;
  }

  const pidOf = (s: Session): number | undefined => (s.executor as SubprocessExecutor).pid;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-shared-"));
    shared = new SharedChildren({ sessionsPerChild: 3 });
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await shared.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("sessions share one child, and one session cannot see another's globals", async () => {
    const [a, b] = [await open(), await open()];
    expect(pidOf(a)).toBeDefined();
    expect(pidOf(b)).toBe(pidOf(a));
    expect((await a.run("var secret = 'a'; globalThis.planted = 1; let later = 2; secret")).value).toBe("a");
    expect((await b.run("[typeof secret, typeof planted, typeof later, Object.keys(globalThis).includes('secret')]")).value).toEqual(["undefined", "undefined", "undefined", false]);
    expect((await a.run("[secret, planted, later]")).value).toEqual(["a", 1, 2]);
  });

  it("caps the sessions of one child: the next session starts another child", async () => {
    const opened = [await open(), await open(), await open(), await open()];
    expect(shared.stats()).toMatchObject({ children: 2, sessions: 4 });
    expect(new Set(opened.map(pidOf)).size).toBe(2);
  });

  it("reset() and close() free only their own context; the child ends with its last session", async () => {
    const [a, b] = [await open(), await open()];
    await a.run("var mine = 'a'");
    await b.run("var mine = 'b'");
    await a.reset();
    expect((await a.run("typeof mine")).value).toBe("undefined");
    expect((await b.run("mine")).value).toBe("b");
    expect(pidOf(a)).toBe(pidOf(b));
    const pid = pidOf(b);
    await a.close();
    expect((await b.run("mine")).value).toBe("b");
    expect(shared.stats().sessions).toBe(1);
    await b.close();
    await waitFor(() => !isAlive(pid), "the shared child to end with its last session");
    expect(shared.stats()).toEqual({ children: 0, sessions: 0, pids: [] });
  });

  it("closing a session in the middle of a run that waits stops only that run; the others keep their child and variables", async () => {
    const [a, b] = [await open(), await open()];
    await b.run("var kept = 'b'");
    const pid = pidOf(b);
    let inRun = false;
    const waiting = a.run("console.log('waiting'); await new Promise((r) => setTimeout(r, 60_000))", { onOutput: () => void (inRun = true) });
    await waitFor(() => inRun, "a's run to be waiting in the child", 20_000);
    await a.close();
    expect((await waiting).error?.name).toBe("SessionClosedError");
    const next = await b.run("kept");
    expect(next.value).toBe("b");
    expect(next.stderr).toBe("");
    expect(pidOf(b)).toBe(pid);
    expect(isAlive(pid)).toBe(true);
  });

  it("a session that leaves while the shared child is still starting leaves it to the sessions joining with it", async () => {
    const spawn = { maxMemoryMb: undefined, permissions: undefined, env: {}, cwd: dir, onMessage: () => undefined };
    const leaving = shared.launch(spawn);
    const staying = shared.launch(spawn);
    // In the same turn as the launch: the child cannot have said it is ready.
    expect(leaving.isReady).toBe(false);
    await leaving.kill();
    await staying.ready;
    expect(staying.isAlive).toBe(true);
    expect(shared.stats()).toMatchObject({ children: 1, sessions: 1 });
    await staying.kill();
  });

  it("a synchronous loop at its deadline is stopped inside the child: its variables are kept and the other sessions go on", async () => {
    const [a, b] = [await open(), await open()];
    await a.run("var kept = 'a'");
    await b.run("var kept = 'b'");
    const pid = pidOf(a);
    const other = b.run("await new Promise((r) => setTimeout(r, 300)); kept");
    const loop = await a.run("while (true) {}", { timeoutMs: 500 });
    expect(loop.error?.name).toBe("TimeoutError");
    expect(loop.error?.message).toMatch(/variables are kept/);
    expect((await other).value).toBe("b");
    expect((await a.run("kept")).value).toBe("a");
    expect(pidOf(a)).toBe(pid);
  });

  it("code only ending the process stops takes every session of that child: a running one gets SessionLostError, an idle one is told, all go on", async () => {
    const [a, b, c] = [await open(), await open(), await open()];
    for (const [s, name] of [[a, "a"], [b, "b"], [c, "c"]] as const) await s.run(`var kept = '${name}'`);
    const pid = pidOf(a);
    // b waits on a timer, c is idle, a is busy after its first await (vm's timeout cannot stop that).
    const waiting = b.run("await new Promise((r) => setTimeout(r, 60_000)); kept");
    const busy = await a.run("await null; while (true) {}", { timeoutMs: 500 });
    expect(busy.error?.name).toBe("TimeoutError");
    expect(busy.error?.message).toMatch(/restarting the executor process/);
    const lost = await waiting;
    expect(lost.error?.name).toBe("SessionLostError");
    expect(lost.error?.message).toMatch(/shared with other sessions ended: another session .* had code still executing at its deadline/);
    await waitFor(() => !isAlive(pid), "the shared child to be ended");
    const idle = await c.run("typeof kept");
    expect(idle.value).toBe("undefined");
    expect(idle.stderr).toMatch(/ended between runs \(another session in the same shared executor process/);
    expect((await b.run("typeof kept")).value).toBe("undefined");
    expect((await a.run("1 + 1")).value).toBe(2);
    // They went on together, in one new child.
    expect(new Set([a, b, c].map(pidOf)).size).toBe(1);
    expect(pidOf(a)).not.toBe(pid);
  });

  it("a cancel of a busy session ends the child the same way; the cancelled session gets CancelledError", async () => {
    const [a, b] = [await open(), await open()];
    const controller = new AbortController();
    const waiting = b.run("await new Promise((r) => setTimeout(r, 60_000))");
    const busy = a.run("await null; while (true) {}", { signal: controller.signal });
    // Whenever the cancel comes, the loop has the child (it starts right after the run's first await).
    setTimeout(() => controller.abort(), 300);
    expect((await busy).error?.name).toBe("CancelledError");
    expect((await waiting).error?.name).toBe("SessionLostError");
  });

  it("direct writes to process.stdout and unhandled rejections land in their own session's run", async () => {
    const [a, b] = [await open(), await open()];
    const writer = (name: string) =>
      `for (let i = 0; i < 5; i++) { process.stdout.write('${name}' + i + '\\n'); await new Promise((r) => setTimeout(r, 5)); } Promise.reject(new Error('from ${name}')); await new Promise((r) => setTimeout(r, 20));`;
    const [ra, rb] = await Promise.all([a.run(writer("a")), b.run(writer("b"))]);
    expect(ra.stdout).toBe("a0\na1\na2\na3\na4\n");
    expect(rb.stdout).toBe("b0\nb1\nb2\nb3\nb4\n");
    expect(ra.stderr).toMatch(/from a/);
    expect(ra.stderr).not.toMatch(/from b/);
    expect(rb.stderr).toMatch(/from b/);
    expect(rb.stderr).not.toMatch(/from a/);
  });

  it("capabilities() states the trade-off", async () => {
    const a = await open();
    const notes = a.capabilities().notes.join("\n");
    expect(notes).toMatch(/shared with up to 2 other sessions/);
    expect(notes).toMatch(/code of one session can reach another's/);
    expect(notes).toMatch(/SessionLostError/);
  });

  it("refuses the options that belong to the child, and a SharedChildren without room for a session", () => {
    expect(() => new SubprocessExecutor({ sharedChild: shared, maxMemoryMb: 64 })).toThrow(/maxMemoryMb cannot be set with sharedChild/);
    expect(() => new SubprocessExecutor({ sharedChild: {} as SharedChildren })).toThrow(/sharedChild must be a SharedChildren/);
    expect(() => new SharedChildren({ sessionsPerChild: 0 })).toThrow(/sessionsPerChild must be a whole number from 1 to 256/);
    // A Python guest is a python3 process of its own: sharing a node child would run its code as TypeScript.
    expect(() => new PythonExecutor({ sharedChild: shared } as never)).toThrow(/sharedChild is not supported for Python guests/);
  });

  it("the SharedChildren's memory cap ends the child, and every session is told", async () => {
    shared = new SharedChildren({ sessionsPerChild: 3, maxMemoryMb: 64 });
    const [a, b] = [await open(), await open()];
    await b.run("var kept = 'b'");
    const over = await a.run("const held = []; for (let i = 0; i < 64; i++) { held.push(Buffer.alloc(8 * 1024 * 1024, 1)); await new Promise((r) => setTimeout(r, 5)); } held.length");
    expect(over.error?.name).toBe("MemoryLimitError");
    expect(over.error?.message).toMatch(/64 MB \(maxMemoryMb, shared by the sessions of one child\)/);
    const next = await b.run("typeof kept");
    expect(next.value).toBe("undefined");
    expect(next.stderr).toMatch(/ended between runs \(over its memory limit/);
  });

  it("docs/executors.md's example runs as written", async () => {
    const doc = readFileSync(path.join(REPO, "docs", "executors.md"), "utf8");
    const block = /```ts\n(import \{ Session, SharedChildren[\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const script = path.join(dir, "example.mjs");
    const dist = pathToFileURL(path.join(REPO, "dist", "index.js")).href;
    const body = (block as string).replace(/from "ts-code-mode";/, `from ${JSON.stringify(dist)};`);
    await writeFile(
      script,
      [
        `import { FileStorage } from ${JSON.stringify(dist)};`,
        `const storage = new FileStorage({ basePath: ${JSON.stringify(dir)} });`,
        `const toolsPath = ${JSON.stringify(EXAMPLE_TOOLS_PATH)};`,
        body,
        "const other = new Session({ storage, executor: new SubprocessExecutor({ toolsPath, sharedChild: shared }) });",
        "await other.start();",
        "console.log(JSON.stringify({ sum: (await session.run('1 + 1')).value, stats: shared.stats() }));",
        "await session.close(); await other.close(); await shared.close();",
      ].join("\n"),
    );
    const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 60_000 });
    const out = JSON.parse(stdout.trim().split("\n").at(-1) as string) as { sum: number; stats: { children: number; sessions: number } };
    expect(out).toMatchObject({ sum: 2, stats: { children: 1, sessions: 2 } });
  });
});
