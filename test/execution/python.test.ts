/**
 * PythonExecutor-only behaviour: the hard limits (interrupt at the deadline, kill when that fails,
 * memory, crashes), the process's lifecycle (close leaves no process behind), parallel calls with
 * asyncio.gather, values crossing the framed channel, and a guest that breaks the protocol. Every
 * case uses a real python3 process.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PythonExecutor, type PythonExecutorOptions } from "../../src/execution/python/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";
import { waitFor } from "../helpers/processes.js";
import { isAlive as pidAlive } from "../mcp/harness.js";
import { EXAMPLE_TOOLS_PATH, executorConformance } from "../conformance/executor.js";

const isAlive = (pid: number | undefined): boolean => pid !== undefined && pidAlive(pid);

describe("PythonExecutor", () => {
  let dir: string;
  let session: Session;
  let executor: PythonExecutor;
  let probe: ProbeAdapter;
  const sessions: Session[] = [];

  async function open(options: PythonExecutorOptions = {}): Promise<Session> {
    probe = new ProbeAdapter();
    const tools = new ToolRegistry();
    tools.register(probe);
    executor = new PythonExecutor({ defaultTimeoutMs: 5_000, tools, ...options });
    session = new Session({ storage: new FileStorage({ basePath: dir }), executor });
    sessions.push(session);
    await session.start();
    return session;
  }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-py-"));
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  describe("options", () => {
    it("refuses a python that would read as an option, and Node-only options", () => {
      expect(() => new PythonExecutor({ python: "--version" })).toThrow(/python: must be a command name or path/);
      expect(() => new PythonExecutor({ permissions: {} } as PythonExecutorOptions)).toThrow(/permissions is not supported/);
      expect(() => new PythonExecutor({ maxMemoryMb: 1 })).toThrow(/maxMemoryMb/);
    });

    it("a python that does not exist fails start() clearly", async () => {
      await expect(open({ python: path.join(dir, "no-such-python") })).rejects.toThrow(/no-such-python|ENOENT|exited during start-up/);
    });
  });

  describe("timeouts", () => {
    it("interrupts a runaway loop with SIGINT and keeps the variables and the process", async () => {
      await open();
      await session.run("kept = 'yes'");
      const pid = executor.pid;
      const r = await session.run("while True:\n    pass", { timeoutMs: 300 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/variables are kept/);
      expect(executor.pid).toBe(pid);
      expect((await session.run("kept")).value).toBe("yes");
    });

    it("interrupts a blocking sleep and an awaited asyncio.sleep", async () => {
      await open();
      expect((await session.run("import time\ntime.sleep(60)", { timeoutMs: 300 })).error?.message).toMatch(/variables are kept/);
      expect((await session.run("import asyncio\nawait asyncio.sleep(60)", { timeoutMs: 300 })).error?.message).toMatch(/variables are kept/);
      expect((await session.run("1 + 1")).value).toBe(2);
    });

    it("an interrupt never splits a frame: a timeout while sending a large call still keeps the variables", async () => {
      await open();
      // The host refuses the unknown argument with a short error: the time goes into writing the frames.
      await session.run("kept = 'yes'\nbig = 'x' * 24_000_000");
      for (let i = 0; i < 5; i++) {
        const r = await session.run("while True:\n    try:\n        tools.probe.sleep(ms=0, pad=big)\n    except Exception:\n        pass", { timeoutMs: 400 });
        expect(r.error?.name).toBe("TimeoutError");
        expect(r.error?.message).toMatch(/variables are kept/);
      }
      expect((await session.run("kept")).value).toBe("yes");
    });

    for (const [label, code] of [
      ["swallows the interrupt (except BaseException)", "import time\nwhile True:\n    try:\n        time.sleep(10)\n    except BaseException:\n        pass"],
      ["ignores SIGINT", "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass"],
    ] as const) {
      it(`kills code that ${label}, restarts Python and says variables were lost`, async () => {
        await open();
        await session.run("lost = 1");
        const pid = executor.pid;
        const r = await session.run(code, { timeoutMs: 300 });
        expect(r.error?.name).toBe("TimeoutError");
        expect(r.error?.message).toMatch(/variables .* lost/);
        expect(isAlive(pid)).toBe(false);
        expect((await session.run("'lost' in globals()")).value).toBe(false);
        expect(executor.pid).not.toBe(pid);
      });
    }
  });

  describe("memory and crashes", () => {
    it("kills a process past maxMemoryMb (resident memory, not only the heap) and starts a fresh one", async () => {
      await open({ maxMemoryMb: 100 });
      await session.run("before = 1");
      const r = await session.run("blocks = []\nwhile True:\n    blocks.append(bytearray(8 * 1024 * 1024))");
      expect(r.error?.name).toBe("MemoryLimitError");
      expect(r.error?.message).toMatch(/100 MB .*variables .* lost/);
      expect((await session.run("'before' in globals()")).value).toBe(false);
    });

    it("os._exit() and a fatal signal end only the run; the next run gets a fresh interpreter", async () => {
      await open();
      for (const code of ["import os\nos._exit(3)", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"]) {
        await session.run("gone = 1");
        const r = await session.run(code);
        expect(r.error?.name).toBe("ExecutorCrashError");
        expect(r.error?.message).toMatch(/variables .* lost/);
        expect((await session.run("'gone' in globals()")).value).toBe(false);
      }
    });

    it("a guest that writes garbage to the host's channel is stopped as a protocol violation", async () => {
      await open();
      const r = await session.run("import os\nos.write(4, b'\\xff\\xff\\xff\\xff' + b'x' * 16)\nimport time\ntime.sleep(5)");
      expect(r.error?.name).toBe("ExecutorCrashError");
      expect(r.error?.message).toMatch(/outside the protocol .*frame of \d+ bytes/);
      const forged = await session.run('import os, json\nb = json.dumps({"type": "call", "callId": -1, "ns": "x", "op": "y", "args": []}).encode()\nos.write(4, len(b).to_bytes(4, "big") + b)\nimport time\ntime.sleep(5)');
      expect(forged.error?.message).toMatch(/outside the protocol .*callId/);
      expect((await session.run("2")).value).toBe(2);
    });
  });

  describe("bounded results", () => {
    it("output is capped per stream and display is cut, with markers saying so", async () => {
      await open();
      const r = await session.run("import sys\nprint('x' * 3_000_000)\nprint('y' * 3_000_000, file=sys.stderr)\n'z' * 200_000");
      expect(r.ok).toBe(true);
      expect(r.stdout.length).toBeLessThan(1_100_000);
      expect(r.stdout).toMatch(/more characters of output cut/);
      expect(r.stderr.length).toBeLessThan(1_100_000);
      expect(r.display.length).toBeLessThan(21_000);
      expect(r.display).toMatch(/more characters cut/);
    });
  });

  describe("lifecycle", () => {
    it("close() kills the Python process and every process it started", async () => {
      await open();
      const r = await session.run("import subprocess\np = subprocess.Popen(['sleep', '300'])\np.pid");
      const grandchild = r.value as number;
      const pid = executor.pid;
      expect(isAlive(grandchild)).toBe(true);
      await session.close();
      await waitFor(() => !isAlive(pid) && !isAlive(grandchild), "python and its sleep to be gone");
    });

    it("asyncio tasks a run left pending never run later: they are cancelled when the run ends", async () => {
      await open();
      await session.run("import asyncio\nhits = []\nasync def later():\n    await asyncio.sleep(0.05)\n    hits.append(1)\nt = asyncio.create_task(later())\nawait asyncio.sleep(0)");
      const r = await session.run("await asyncio.sleep(0.3)\n[hits, t.cancelled()]");
      expect(r.value).toEqual([[], true]);
    });

    it("reset() forgets globals by starting a fresh interpreter", async () => {
      await open();
      await session.run("x = 5");
      await session.reset();
      expect((await session.run("'x' in globals()")).value).toBe(false);
    });
  });

  describe("namespace calls", () => {
    it("asyncio.gather of call_async runs five tool calls at the same time", async () => {
      await open();
      const r = await session.run("import asyncio\nawait asyncio.gather(*[tools.probe.sleep.call_async(ms=200) for _ in range(5)])");
      expect(r.error).toBeNull();
      expect(probe.maxInFlight).toBe(5);
    });

    it("plain calls are synchronous: one at a time, results as Python values", async () => {
      await open();
      const r = await session.run("[tools.probe.sleep(ms=20) for _ in range(3)]");
      expect(r.value).toEqual([1, 1, 1]);
      expect(probe.maxInFlight).toBe(1);
    });

    it("kwargs and one dict both become the args object; a bad mix is a TypeError", async () => {
      await open();
      expect((await session.run("tools.probe.echo(value={'a': [1, 2]})")).value).toEqual({ a: [1, 2] });
      expect((await session.run("tools.probe.echo({'value': 3})")).value).toBe(3);
      expect((await session.run("tools.probe.echo({'value': 3}, value=4)")).error?.name).toBe("TypeError");
    });

    it("values cross both ways: bytes, big ints, non-finite floats, nested data, and dicts that look like tags", async () => {
      await open();
      const r = await session.run(
        "v = tools.probe.echo(value={'b': b'\\x00\\xff', 'big': 2**70, 'inf': float('inf'), 'tag': {'$bytes': 'not bytes'}, 'list': [None, True, 1.5, 'é']})\n" +
          "[v['b'] == b'\\x00\\xff', v['big'] == 2**70, v['inf'] == float('inf'), v['tag'] == {'$bytes': 'not bytes'}, v]",
      );
      expect(r.error).toBeNull();
      const [bytesOk, bigOk, infOk, tagOk, v] = r.value as [boolean, boolean, boolean, boolean, Record<string, unknown>];
      expect([bytesOk, bigOk, infOk, tagOk]).toEqual([true, true, true, true]);
      expect(v["b"]).toEqual(new Uint8Array([0, 255]));
      expect(v["big"]).toBe(2n ** 70n);
      expect(v["inf"]).toBe(Infinity);
      expect(v["tag"]).toEqual({ $bytes: "not bytes" });
      expect(v["list"]).toEqual([null, true, 1.5, "é"]);
    });

    it("a host error is raised as an exception named like the host's error", async () => {
      await open();
      const r = await session.run("try:\n    artifacts.load('missing.txt')\nexcept Exception as e:\n    out = [type(e).__name__, str(e)]\nout");
      expect((r.value as string[])[0]).toBe("NotFoundError");
      expect((r.value as string[])[1]).toMatch(/missing\.txt/);
    });

    it("tools.describe answers in Python stubs, the same text as the Session facade's describeTool", async () => {
      await open({ toolsPath: EXAMPLE_TOOLS_PATH, tools: undefined });
      const text = (await session.run("tools.describe('echo')")).value as string;
      expect(text).toContain("def say(*, text: list[str]) -> Any:");
      expect(text).toContain("def __call__(*, text: list[str], no_newline: bool = None, escapes: bool = None) -> Any:");
      expect(text).toContain("call_async");
      expect(await session.describeTool("echo")).toBe(text);
      // The stubs are valid Python.
      expect((await session.run(`import ast\nast.parse(${JSON.stringify(text)}) is not None`)).value).toBe(true);
    });

    it("running a (TypeScript) workflow from Python is refused clearly; listing and creating (language typescript) work", async () => {
      await open();
      // Creating a TypeScript workflow type-checks it on the host (the checker loads on first use):
      // seconds on a loaded machine, so this run gets more than the session's 5 s default.
      const created = await session.run("workflows.create(name='triple', source='export async function run({ n }: { n: number }) { return n * 3; }', language='typescript')['name']", { timeoutMs: 60_000 });
      expect(created.error ?? undefined).toBeUndefined();
      expect(created.value).toBe("triple");
      expect((await session.run("[w['name'] for w in workflows.list()]")).value).toEqual(["triple"]);
      const r = await session.run("workflows.triple(n=4)");
      expect(r.error?.name).toBe("ValidationError");
      expect(r.error?.message).toMatch(/"triple" is a TypeScript workflow; a Python session cannot run it/);
    });

    it("a value that is not plain data is refused in the guest with a TypeError", async () => {
      await open();
      const r = await session.run("tools.probe.echo(value=object())");
      expect(r.error?.name).toBe("TypeError");
      expect(r.error?.message).toMatch(/plain data/);
    });
  });
});

executorConformance("PythonExecutor", (opts) => new PythonExecutor(opts), { language: "python" });
