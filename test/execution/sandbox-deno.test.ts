/**
 * SandboxExecutor with engine "deno" (V8 in a `deno` process without permissions): the shared
 * conformance suite, then what only this engine promises — every permission denied inside, the
 * process-level limits (timeout, memory, crash, close) and parallel namespace calls.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SandboxExecutor, type SandboxExecutorOptions } from "../../src/execution/sandbox/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";
import { executorConformance } from "../conformance/executor.js";
import { waitFor } from "../helpers/processes.js";

executorConformance("SandboxExecutor (deno)", (opts) => new SandboxExecutor({ engine: "deno", ...opts }), { skillsRun: false });

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("SandboxExecutor (deno engine)", () => {
  let dir: string;
  let session: Session;
  let executor: SandboxExecutor;
  let probe: ProbeAdapter;
  const sessions: Session[] = [];

  async function open(options: SandboxExecutorOptions = {}): Promise<Session> {
    probe = new ProbeAdapter();
    const tools = new ToolRegistry();
    tools.register(probe);
    executor = new SandboxExecutor({ engine: "deno", defaultTimeoutMs: 5_000, tools, ...options });
    session = new Session({ storage: new FileStorage({ basePath: dir }), executor });
    sessions.push(session);
    await session.start();
    return session;
  }

  async function value(code: string, s: Session = session): Promise<unknown> {
    const r = await s.run(code);
    expect(r.error, code).toBeNull();
    return r.value;
  }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-sandbox-deno-"));
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("reports its capabilities honestly", async () => {
    await open();
    expect(session.capabilities().capabilities.sort()).toEqual(["filesystemIsolation", "memoryLimit", "networkIsolation", "processIsolation", "reset", "timeout"]);
    expect(session.supports("depsInstall")).toBe(false);
    expect(executor.engine).toBe("deno");
  });

  describe("no permission inside", () => {
    it.each([
      ["reading a file", "await Deno.readTextFile('/etc/hostname')"],
      ["writing a file", "await Deno.writeTextFile('/tmp/tcm-deno-escape.txt', 'x')"],
      ["the network", "await fetch('http://127.0.0.1:8080/')"],
      ["the environment", "Deno.env.get('HOME')"],
      ["running a process", "await new Deno.Command('echo', { args: ['hi'] }).output()"],
      ["loading a library (FFI)", "Deno.dlopen('libc.so.6', {})"],
      ["importing a module", "await import('node:fs')"],
      ["Node's fs through Deno's node compatibility", "(await new Function('return import(\"node:fs\")')()).readFileSync('/etc/hostname', 'utf8')"],
      ["Node's child_process through Deno's node compatibility", "(await new Function('return import(\"node:child_process\")')()).execSync('id').toString()"],
      ["the environment through Node's process", "process.env.HOME"],
      ["a worker (it inherits no permission)", "await new Promise((res, rej) => { const w = new Worker('data:text/javascript,postMessage(Deno.env.get(\"HOME\"))', { type: 'module' }); w.onmessage = (e) => res(e.data); w.onerror = (e) => { e.preventDefault(); rej(new Error(e.message)); }; })"],
    ])("%s fails", async (_what, code) => {
      await open();
      const r = await session.run(code);
      expect(r.ok).toBe(false);
      expect(r.error?.name).not.toBe("TimeoutError");
    });

    it("asking for a permission is denied without a prompt", async () => {
      await open();
      expect(await value("(await Deno.permissions.request({ name: 'read' })).state")).toBe("denied");
    });

    it("permission errors are Deno's NotCapable", async () => {
      await open();
      const r = await session.run("(() => { try { Deno.env.get('HOME'); return 'read'; } catch (e) { return e.name; } })()");
      expect(r.value).toBe("NotCapable");
    });
  });

  describe("limits", () => {
    it("a synchronous loop is stopped at the timeout by restarting the process; variables are lost", async () => {
      await open();
      await value("var before = 1");
      const pid = executor.processId;
      const r = await session.run("for (;;) {}", { timeoutMs: 200 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/lost/);
      expect(await value("typeof before")).toBe("undefined");
      expect(executor.processId).not.toBe(pid);
      expect(isAlive(pid as number)).toBe(false);
    });

    it("a run waiting on a tool call is stopped at the timeout, the call aborted, variables kept", async () => {
      await open();
      await value("var waitingKept = 'yes'");
      const r = await session.run("try { await tools.probe.sleep({ ms: 10000 }) } finally { globalThis.resumed = true }", { timeoutMs: 200 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/kept/);
      await waitFor(() => probe.aborted === 1, "the probe call to be aborted");
      expect(await value("waitingKept")).toBe("yes");
      expect(await value("typeof resumed")).toBe("undefined");
    });

    it("a guest that gets no CPU while it is asked to stop (as on a loaded machine) keeps its variables: the grace is its own CPU time, not the clock", async () => {
      await open();
      await value("var patient = 'yes'");
      const pid = executor.processId as number;
      const run = session.run("await tools.probe.sleep({ ms: 10000 })", { timeoutMs: 500 });
      await waitFor(() => probe.inFlight === 1, "the probe call to start");
      // The process cannot run from here until 1.5 s later: the request to stop at the 500 ms
      // timeout waits in it ~1 s. A 250 ms wall-clock grace judged it busy and replaced it.
      process.kill(pid, "SIGSTOP");
      const resumed = new Promise<void>((resolve) => setTimeout(() => resolve(process.kill(pid, "SIGCONT") && undefined), 1_500));
      const r = await run;
      await resumed;
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/kept/);
      expect(executor.processId).toBe(pid);
      expect(await value("patient")).toBe("yes");
    });

    it("running out of memory is a MemoryLimitError naming the limit, then a fresh process", async () => {
      await open({ memoryMb: 64 });
      await value("var beforeOom = 1");
      const r = await session.run("const chunks = []; for (;;) chunks.push(new Array(1e5).fill(1.5))");
      expect(r.error?.name).toBe("MemoryLimitError");
      expect(r.error?.message).toMatch(/64 MB/);
      expect(await value("typeof beforeOom")).toBe("undefined");
      expect(await value("1 + 1")).toBe(2);
    });

    it("memory outside V8's heap (ArrayBuffers) counts too: MemoryLimitError, then a fresh process", async () => {
      await open({ memoryMb: 64 });
      const r = await session.run("const buffers = []; for (let i = 0; i < 100; i++) { buffers.push(new Uint8Array(5e7).fill(1)) }");
      expect(r.error?.name).toBe("MemoryLimitError");
      expect(r.error?.message).toMatch(/64 MB/);
      expect(await value("1 + 2")).toBe(3);
    });

    it("a crash of the process is an error result and the next run gets a fresh process", async () => {
      await open();
      const r = await session.run("Deno.exit(3)");
      expect(r.ok).toBe(false);
      expect(r.error?.name).toBe("SandboxCrashError");
      expect(r.error?.message).toMatch(/exit code 3/);
      expect(await value("2 + 2")).toBe(4);
    });

    it("bytes written to the protocol channel by agent code end that process, not the host", async () => {
      await open();
      const r = await session.run("Deno.stdout.writeSync(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9])); await new Promise((r) => setTimeout(r, 2000))");
      expect(r.error?.name).toBe("SandboxCrashError");
      expect(r.error?.message).toMatch(/not a frame/);
      expect(await value("3 + 3")).toBe(6);
    });

    it("a process that dies between runs is replaced, and the next run says variables were lost", async () => {
      await open();
      await value("var beforeKill = 1");
      const pid = executor.processId as number;
      process.kill(pid, "SIGKILL");
      await waitFor(() => !isAlive(pid), "the process to end");
      const r = await session.run("typeof beforeKill");
      expect(r.value).toBe("undefined");
      expect(r.stderr).toMatch(/ended between runs.*variables from earlier runs were lost/);
    });

    it("close() leaves no deno process behind", async () => {
      await open();
      await value("1");
      const pid = executor.processId;
      expect(pid).toBeTypeOf("number");
      expect(isAlive(pid as number)).toBe(true);
      await session.close();
      expect(isAlive(pid as number)).toBe(false);
      expect(executor.processId).toBeNull();
    });

    it("close() while the process is still starting kills it rather than waiting for it to be ready", async () => {
      // A spare (ExecutorPool) still starting when `mcp --http` or `serve` shuts down. The process
      // is stopped as soon as it exists, so it cannot get ready by itself: a close() that waited
      // for it would end only at the start timeout, with "did not start within".
      const spare = new SandboxExecutor({ engine: "deno" });
      const started = spare.prestart!().then(
        () => "ready",
        (err: Error) => err.message,
      );
      await waitFor(() => spare.processId !== null, "the deno process to be spawned");
      const pid = spare.processId as number;
      process.kill(pid, "SIGSTOP");
      await spare.close();
      expect(isAlive(pid)).toBe(false);
      // "closed": the process was ready before the stop (a fast machine); either way it is gone.
      expect(await started).toMatch(/exited before it was ready|the executor was closed/);
    }, 120_000);

    it("reset() replaces the process", async () => {
      await open();
      await value("var gone = 1");
      const pid = executor.processId;
      await session.reset();
      expect(await value("typeof gone")).toBe("undefined");
      expect(isAlive(pid as number)).toBe(false);
    });
  });

  describe("calls and output", () => {
    it("five parallel 20 ms tool calls are in flight together", async () => {
      await open();
      const results = await value("await Promise.all([1, 2, 3, 4, 5].map(() => tools.probe.sleep({ ms: 20 })))");
      expect(results).toHaveLength(5);
      expect(probe.maxInFlight).toBe(5);
    });

    it("values cross as copied data in both directions", async () => {
      await open();
      const v = await value("await tools.probe.echo({ value: { m: new Map([[1, 'a']]), d: new Date(0), b: new Uint8Array([1, 2]), n: 10n } })");
      expect(v).toEqual({ m: new Map([[1, "a"]]), d: new Date(0), b: new Uint8Array([1, 2]), n: 10n });
    });

    it("console output never reaches the protocol channel and comes back with the run", async () => {
      await open();
      const r = await session.run("console.log('out', { a: 1 }); console.error('err'); 7");
      expect(r.value).toBe(7);
      expect(r.stdout).toBe("out { a: 1 }\n");
      expect(r.stderr).toBe("err\n");
    });

    it("runs CPU-bound code at V8 speed", async () => {
      await open();
      expect(await value("let s = 0; for (let i = 0; i < 1e7; i++) s += i; s")).toBe(49999995000000);
    });
  });
});
