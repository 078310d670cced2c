/**
 * SandboxExecutor({ language: "python" }): Pyodide inside the deno engine (real deno, real
 * Pyodide). The language block of the conformance suite with Python snippets, then what this mode
 * adds: synchronous and awaitable namespace calls, Python workflows, the process limits (timeout
 * restarts and says variables were lost, memory cap, freeze, close leaves no process). One loaded
 * Pyodide sandbox is shared by the tests of the second block (a load takes seconds).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExecutorPool } from "../../src/execution/pool.js";
import { SandboxExecutor } from "../../src/execution/sandbox/executor.js";
import { denoArgs } from "../../src/execution/sandbox/deno/process.js";
import { SNAPSHOT_HEADER_BYTES } from "../../src/execution/sandbox/deno/pyodide.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { executorConformance, EXAMPLE_TOOLS_PATH } from "../conformance/executor.js";
import { isAlive } from "../mcp/harness.js";
import { setEnv } from "../helpers/env.js";
import { waitFor } from "../helpers/processes.js";

// The first two blocks start from the tests' shared snapshot cache (vitest.config.ts's
// TCM_PYODIDE_CACHE_DIR: made once per machine, not in the user's ~/.cache); the snapshot block
// below makes its own in folders of its own. This file shares its worker with later files
// (vitest.config.ts): what it sets in process.env it puts back (setEnv).

executorConformance("SandboxExecutor (python, Pyodide in deno)", (opts) => new SandboxExecutor({ language: "python", ...opts }), { language: "python" });

describe("SandboxExecutor with language python", () => {
  let dir: string;
  let session: Session;
  let executor: SandboxExecutor;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-pyodide-"));
    executor = new SandboxExecutor({ language: "python", toolsPath: EXAMPLE_TOOLS_PATH, defaultTimeoutMs: 10_000 });
    session = new Session({ storage: new FileStorage({ basePath: dir }), executor });
    await session.start();
  });

  afterAll(async () => {
    await session?.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  async function value(code: string): Promise<unknown> {
    const r = await session.run(code);
    expect(r.error, code).toBeNull();
    return r.value;
  }

  it("refuses the QuickJS engine for Python, and runs deno with read access to the Pyodide folder only", () => {
    expect(() => new SandboxExecutor({ language: "python", engine: "quickjs" })).toThrow(/deno engine/);
    const args = denoArgs(256, "guest.js", "/opt/pyodide");
    expect(args).toContain("--allow-read=/opt/pyodide");
    expect(args).not.toContain("--deny-read");
    expect(args.filter((a) => a.startsWith("--allow-"))).toEqual(["--allow-read=/opt/pyodide"]);
    expect(executor.language).toBe("python");
    expect(executor.engine).toBe("deno");
  });

  it("namespace calls are synchronous, or awaitable with call_async (asyncio.gather)", async () => {
    expect(await value("tools.echo.say(text=['sync'])")).toBe("sync\n");
    expect(await value("await tools.echo.say.call_async(text=['async'])")).toBe("async\n");
    expect(await value("import asyncio\nawait asyncio.gather(*[tools.echo.say.call_async(text=[str(i)]) for i in range(5)])")).toEqual(["0\n", "1\n", "2\n", "3\n", "4\n"]);
  });

  it("awaiting a namespace call directly means call_async: await tools.x.y(...), await artifacts.save(...)", async () => {
    expect(await value("await tools.echo.say(text=['awaited'])")).toBe("awaited\n");
    expect(await value("await artifacts.save('aw.json', {'k': 1})\n(await artifacts.load('aw.json'))['k']")).toBe(1);
    expect(await value("async def twice():\n    return [await tools.echo.say(text=[w]) for w in 'ab']\nawait twice()")).toEqual(["a\n", "b\n"]);
  });

  it("values cross as Python values: bytes, big ints, None, nested dicts; the display is repr", async () => {
    const r = await session.run("artifacts.save('p.json', {'n': None, 'b': [True]})\nx = artifacts.load('p.json')\n(type(x).__name__, x['n'], x['b'])");
    expect(r.error).toBeNull();
    expect(r.value).toEqual(["dict", null, [true]]);
    expect(r.display).toBe("('dict', None, [True])");
    expect(await value("type(artifacts.load('conf.bin') if artifacts.exists('conf.bin') else b'').__name__")).toBe("bytes");
    expect(await value("2**70")).toBe(2n ** 70n);
  });

  it("an error's stack is the Python traceback of the snippet's frames; input() has no stdin (EOFError)", async () => {
    const r = await session.run("def f():\n    raise KeyError('x')\nf()");
    expect(r.error?.stack).toBe(`KeyError: 'x'\nTraceback (most recent call last):\n  File "<run>", line 3, in <module>\n  File "<run>", line 2, in f`);
    expect((await session.run("input()")).error?.name).toBe("EOFError");
  });

  it("a host error keeps its name as a Python exception class", async () => {
    expect(await value("try:\n    tools.nope.x()\nexcept Exception as e:\n    r = type(e).__name__\nr")).toBe("NotFoundError");
  });

  it("Python workflows run in the Pyodide guest with kwargs", async () => {
    await value("workflows.create(name='triple', source='def run(n: int) -> int:\\n    \"\"\"Triple a number.\"\"\"\\n    return n * 3\\n', language='python')");
    expect(await value("workflows.triple(n=4)")).toBe(12);
    expect(await value("await workflows.triple.call_async(n=5)")).toBe(15);
    expect(await value("await workflows.triple(n=6)")).toBe(18);
    // An async run is awaited for a synchronous call too (JSPI suspends until it settles).
    await value("workflows.create(name='later', source='import asyncio\\nasync def run(x: str) -> str:\\n    await asyncio.sleep(0.01)\\n    return tools.echo.say(text=[x]).strip()\\n', language='python')");
    expect(await value("workflows.later(x='sync')")).toBe("sync");
    const listed = (await value("[w['language'] for w in workflows.list() if w['name'] == 'triple']")) as string[];
    expect(listed).toEqual(["python"]);
  });

  it("a TypeScript workflow is refused, naming its language", async () => {
    await session.addWorkflow({ name: "tsdouble", source: "export async function run({ n }: { n: number }) { return n * 2; }" });
    const r = await session.run("workflows.tsdouble(n=1)");
    expect(r.error?.name).toBe("ValidationError");
    expect(r.error?.message).toMatch(/"tsdouble" is a TypeScript workflow; a Python session cannot run it/);
  });

  it("tools.describe answers with Python stubs", async () => {
    expect(await session.describeTool("echo")).toMatch(/def |class /);
  });

  it.runIf(process.platform === "linux")("between runs the process is frozen (SIGSTOP)", async () => {
    await value("1");
    const pid = executor.processId as number;
    expect(pid).toBeGreaterThan(0);
    // SIGSTOP reaches every thread of the process when the kernel next schedules it (a busy machine: a moment).
    const state = () => /^\d+ \(.*\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1];
    await waitFor(() => state() === "T", "the process to be stopped between runs", 5_000);
  });

  it("a run stopped while it waits (a timer) keeps its variables; a busy one restarts the interpreter and says so", async () => {
    await value("kept = 1");
    const slept = await session.run("import asyncio\nawait asyncio.sleep(60)", { timeoutMs: 500 });
    expect(slept.error?.name).toBe("TimeoutError");
    expect(slept.error?.message).toMatch(/variables are kept/);
    expect(await value("globals().get('kept', 'lost')")).toBe(1);
    // A cancel while it waits, the same (a wait on a tool call: test/matrix/python-sandbox.test.ts).
    const abort = new AbortController();
    const waiting = session.run("import asyncio\nawait asyncio.sleep(60)", { signal: abort.signal });
    setTimeout(() => abort.abort(), 300);
    expect((await waiting).error?.name).toBe("CancelledError");
    expect(await value("globals().get('kept', 'lost')")).toBe(1);
    const busy = await session.run("while True:\n    pass", { timeoutMs: 500 });
    expect(busy.error?.name).toBe("TimeoutError");
    expect(busy.error?.message).toMatch(/lost/);
    expect(await value("globals().get('kept', 'lost')")).toBe("lost");
  }, 120_000);

  it("a memory hog is stopped by the memory cap and the next run gets a fresh interpreter", async () => {
    await value("kept = 1");
    const r = await session.run("hog = []\nwhile True:\n    hog.append(b'x' * (64 * 1024 * 1024))", { timeoutMs: 60_000 });
    expect(r.error?.name).toBe("MemoryLimitError");
    expect(await value("globals().get('kept', 'lost')")).toBe("lost");
  }, 120_000);

  it("close() ends the deno process (last: it closes the shared session)", async () => {
    await value("1");
    const pid = executor.processId as number;
    expect(isAlive(pid)).toBe(true);
    await session.close();
    await waitFor(() => !isAlive(pid), "the deno process to end");
  });
});

describe("SandboxExecutor with language python in an ExecutorPool", () => {
  it("a spare has loaded Pyodide before its session starts; the pool's close() ends the spares", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-pyodide-pool-"));
    const pool = new ExecutorPool(() => new SandboxExecutor({ language: "python", toolsPath: EXAMPLE_TOOLS_PATH }), { spares: 1 });
    let session: Session | undefined;
    try {
      await waitFor(() => pool.ready === 1, "a warm Pyodide spare", 120_000, 100);
      const executor = pool.take() as SandboxExecutor;
      await pool.close();
      const pid = executor.processId as number;
      expect(executor.warm).toBe(true);
      session = new Session({ storage: new FileStorage({ basePath: dir }), executor });
      await session.start();
      const r = await session.run("tools.echo.say(text=['warm'])");
      expect(r.value).toBe("warm\n");
      // The session runs in the process that was loaded before it started.
      expect(executor.processId).toBe(pid);
    } finally {
      await session?.close();
      await pool.close();
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  }, 180_000);
});

describe("SandboxExecutor with language python from a memory snapshot", () => {
  const dirs: string[] = [];
  let snapDir: string;
  let restoreEnv: (() => void) | undefined;

  beforeAll(async () => {
    snapDir = await mkdtemp(path.join(os.tmpdir(), "tcm-pyodide-snap-"));
    restoreEnv = setEnv({ TCM_PYODIDE_CACHE_DIR: snapDir });
  });

  afterAll(async () => {
    restoreEnv?.();
    await Promise.all([snapDir, ...dirs].map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
  });

  /** A new session (a new deno process) runs `code`; its result. */
  async function inNewSession(code: string) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-pyodide-snaprun-"));
    dirs.push(dir);
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SandboxExecutor({ language: "python", defaultTimeoutMs: 20_000 }) });
    try {
      await session.start();
      return await session.run(code);
    } finally {
      await session.close();
    }
  }

  async function snapshotFile(): Promise<string> {
    const names = (await readdir(snapDir)).filter((n) => n.endsWith(".snap"));
    expect(names).toHaveLength(1);
    return path.join(snapDir, names[0] as string);
  }

  /** The file's header is the SHA-256 of its snapshot bytes. */
  async function intact(file: string): Promise<boolean> {
    const data = await readFile(file);
    const digest = createHash("sha256").update(data.subarray(SNAPSHOT_HEADER_BYTES)).digest("hex");
    return data.subarray(0, 64).toString("latin1") === digest;
  }

  it("the host makes the snapshot before any agent code; a guest's variables never reach another session", async () => {
    const first = await inNewSession("import random\nx_secret = 41\n(x_secret + 1, random.random())");
    expect(first.error).toBeNull();
    const [answer, firstRandom] = first.value as [number, number];
    expect(answer).toBe(42);
    const file = await snapshotFile();
    expect(await intact(file)).toBe(true);
    // The next session may read the snapshot file (it started from it), and has none of the
    // first session's state; `random` is reseeded (its state is in the snapshot).
    const second = await inNewSession(`import js, random\n(js.Deno.statSync(${JSON.stringify(file)}).size > 0, 'x_secret' in globals(), random.random())`);
    expect(second.error).toBeNull();
    const [readable, leaked, secondRandom] = second.value as [boolean, boolean, number];
    expect([readable, leaked]).toEqual([true, false]);
    expect(secondRandom).not.toBe(firstRandom);
  }, 240_000);

  it("the guest cannot write the snapshot", async () => {
    const file = await snapshotFile();
    const before = await readFile(file);
    const r = await inNewSession(`import js\njs.Deno.writeFileSync(${JSON.stringify(file)}, js.Uint8Array.new(4))`);
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/write access/i);
    expect((await readFile(file)).equals(before)).toBe(true);
  }, 240_000);

  it("TCM_PYODIDE_SNAPSHOT=off: no snapshot is made or read", async () => {
    const own = await mkdtemp(path.join(os.tmpdir(), "tcm-pyodide-nosnap-"));
    dirs.push(own);
    const restore = setEnv({ TCM_PYODIDE_CACHE_DIR: own, TCM_PYODIDE_SNAPSHOT: "off" });
    try {
      const r = await inNewSession("6 * 7");
      expect(r.value).toBe(42);
      expect(await readdir(own).catch(() => [])).toEqual([]);
    } finally {
      restore();
    }
  }, 240_000);

  it("a session closed while the snapshot is being made stops the maker: no process left, nothing written", async () => {
    const own = await mkdtemp(path.join(os.tmpdir(), "tcm-pyodide-closed-"));
    const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-pyodide-snaprun-"));
    dirs.push(own, dir);
    const restore = setEnv({ TCM_PYODIDE_CACHE_DIR: own });
    // This test process's own children running the maker program (pyodide-snapshot.ts).
    const makers = () => execFileSync("ps", ["--ppid", String(process.pid), "-o", "pid=,args="], { encoding: "utf8" }).split("\n").filter((l) => l.includes("maker.js"));
    try {
      const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new SandboxExecutor({ language: "python" }) });
      await session.start();
      await waitFor(() => makers().length > 0, "the snapshot maker to start", 60_000);
      await session.close();
      // Without the stop, close() waits for the whole build, which then writes the snapshot.
      await waitFor(() => makers().length === 0, "the maker to end", 10_000);
      expect(await readdir(own).catch(() => [])).toEqual([]);
    } finally {
      restore();
    }
  }, 240_000);

  it("a truncated snapshot is not used: the session loads normally and the snapshot is made again", async () => {
    const file = await snapshotFile();
    const data = await readFile(file);
    await writeFile(file, data.subarray(0, Math.floor(data.length / 2)));
    expect(await intact(file)).toBe(false);
    const r = await inNewSession("import sys\n'_tcm_adapter' in sys.modules and 6 * 7");
    expect(r.error).toBeNull();
    expect(r.value).toBe(42);
    expect(await intact(await snapshotFile())).toBe(true);
  }, 240_000);
});
