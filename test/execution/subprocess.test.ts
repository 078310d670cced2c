/**
 * SubprocessExecutor-only behaviour: the hard limits (runaway code, memory, crashes), the child's
 * lifecycle (reset, close leave no process behind), parallel tool calls over RPC, values crossing
 * by structured clone, and Node's permission model. Every case uses a real child process.
 */
import { RUN_STOP_MARGIN_MS } from "../../src/execution/run-budget.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SubprocessExecutor, type SubprocessExecutorOptions } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";
import { executorConformance } from "../conformance/executor.js";
import { waitFor } from "../helpers/processes.js";
import { isAlive as pidAlive } from "../mcp/harness.js";

executorConformance("SubprocessExecutor", (opts) => new SubprocessExecutor(opts));

const isAlive = (pid: number | undefined): boolean => pid !== undefined && pidAlive(pid);

describe("SubprocessExecutor", () => {
  let dir: string;
  let session: Session;
  let executor: SubprocessExecutor;
  let probe: ProbeAdapter;
  const sessions: Session[] = [];

  async function open(options: SubprocessExecutorOptions = {}): Promise<Session> {
    probe = new ProbeAdapter();
    const tools = new ToolRegistry();
    tools.register(probe);
    executor = new SubprocessExecutor({ defaultTimeoutMs: 2_000, tools, ...options });
    session = new Session({ storage: new FileStorage({ basePath: dir }), executor });
    sessions.push(session);
    await session.start();
    return session;
  }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-sub-"));
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  describe("timeouts", () => {
    it("interrupts a synchronous loop inside the child and keeps its variables", async () => {
      await open();
      await session.run("var kept = 'yes'");
      const pid = executor.pid;
      const r = await session.run("while (true) {}", { timeoutMs: 300 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/variables are kept/);
      expect(executor.pid).toBe(pid);
      expect((await session.run("kept")).value).toBe("yes");
    });

    // The child is interrupted with SIGINT at the deadline (src/execution/subprocess/interrupt.ts), not with vm's timeout.
    it("still interrupts a synchronous loop, variables kept, after the guest added its own SIGINT listener", async () => {
      await open();
      await session.run("var kept = 'yes'; process.on('SIGINT', () => {})");
      const pid = executor.pid;
      const r = await session.run("while (true) {}", { timeoutMs: 300 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/variables are kept/);
      expect(executor.pid).toBe(pid);
      expect((await session.run("kept")).value).toBe("yes");
    });

    it("stops asynchronous code whose guest swallows SIGINT by restarting the child", async () => {
      await open();
      const pid = executor.pid;
      const r = await session.run("process.on('SIGINT', () => {}); await null; while (true) {}", { timeoutMs: 300 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/variables .* lost/);
      expect(isAlive(pid)).toBe(false);
      expect((await session.run("1 + 1")).value).toBe(2);
    });

    for (const [label, code] of [
      ["a sync loop after an await", "await null; while (true) {}"],
      ["an async loop that never yields to the event loop", "for (;;) await null"],
    ] as const) {
      it(`stops ${label} by restarting the child, and says variables were lost`, async () => {
        await open();
        await session.run("var lost = 1");
        const pid = executor.pid;
        const r = await session.run(code, { timeoutMs: 300 });
        expect(r.ok).toBe(false);
        expect(r.error?.name).toBe("TimeoutError");
        expect(r.error?.message).toMatch(/variables .* lost/);
        expect(isAlive(pid)).toBe(false);
        const next = await session.run("typeof lost");
        expect(next.value).toBe("undefined");
        expect(executor.pid).not.toBe(pid);
      });
    }

    it("aborts a tool call still in flight when the run times out", async () => {
      await open();
      const r = await session.run("await tools.probe.sleep({ ms: 10000 })", { timeoutMs: 300 });
      expect(r.error?.name).toBe("TimeoutError");
      await waitFor(() => probe.aborted === 1, "the probe call to be aborted");
    });

    it("an idle run (an endless setInterval and a promise that never settles) is stopped in place: variables kept, its timers gone, the same child", async () => {
      await open();
      await session.run("var kept = 1; globalThis.ticks = 0;");
      const pid = executor.pid;
      const r = await session.run("setInterval(() => { globalThis.ticks++; }, 1); await new Promise(() => {})", { timeoutMs: 300 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/variables are kept/);
      expect(executor.pid).toBe(pid);
      const ticks = (await session.run("globalThis.ticks")).value as number;
      // The interval was cleared with the run: no tick between these two runs.
      expect((await session.run("globalThis.ticks")).value).toBe(ticks);
      expect((await session.run("kept")).value).toBe(1);
    });

    it("gives each tool call the time left in the run, plus the margin that lets the run's own stop come first", async () => {
      await open();
      await session.run("await tools.probe.echo({ value: 1 })", { timeoutMs: 5_000 });
      const ctx = probe.contexts.at(-1);
      expect(ctx?.timeoutMs).toBeGreaterThan(RUN_STOP_MARGIN_MS);
      expect(ctx?.timeoutMs).toBeLessThanOrEqual(5_000 + RUN_STOP_MARGIN_MS);
      expect(ctx?.signal).toBeInstanceOf(AbortSignal);
    });

    it("a cancel while the code waits on a tool keeps the variables and the child", async () => {
      await open();
      await session.run("var keptToo = 2;");
      const pid = executor.pid;
      const abort = new AbortController();
      const calls = probe.contexts.length;
      const running = session.run("await tools.probe.echo({ value: 1 }); await new Promise(() => {})", { signal: abort.signal });
      await waitFor(() => probe.contexts.length > calls, "the run to start");
      abort.abort();
      const r = await running;
      expect(r.error?.name).toBe("CancelledError");
      expect(r.error?.message).toMatch(/variables are kept/);
      expect(executor.pid).toBe(pid);
      expect((await session.run("keptToo")).value).toBe(2);
    });
  });

  describe("memory and crashes", () => {
    it("reports a heap over maxMemoryMb as MemoryLimitError naming the limit, then runs again", async () => {
      await open({ maxMemoryMb: 64 });
      const r = await session.run("const a = []; while (true) a.push(new Array(1e5).fill(1))", { timeoutMs: 20_000 });
      expect(r.error?.name).toBe("MemoryLimitError");
      expect(r.error?.message).toContain("64 MB");
      expect((await session.run("1 + 1")).value).toBe(2);
    });

    for (const [label, code, expected] of [
      ["process.exit(3)", "process.exit(3)", /exit code 3/],
      ["an exception thrown from a timer", "setTimeout(() => { throw new Error('boom from timer') }, 5); await new Promise((r) => setTimeout(r, 2000))", /boom from timer/],
      ["process.kill(process.pid)", "process.kill(process.pid)", /SIGTERM/],
    ] as const) {
      it(`turns ${label} into an error result and a fresh child`, async () => {
        await open();
        const pid = executor.pid;
        const r = await session.run(code);
        expect(r.ok).toBe(false);
        expect(r.error?.message).toMatch(expected);
        expect(r.error?.message).toMatch(/restarted/);
        const next = await session.run("40 + 2");
        expect(next.value).toBe(42);
        expect(executor.pid).not.toBe(pid);
      });
    }

    it("tells the next run when the child died between runs", async () => {
      await open();
      const pid = executor.pid;
      // Guest timers end with their run, so a child dies between runs only from outside.
      process.kill(pid!, "SIGKILL");
      await waitFor(() => !isAlive(pid), "the child to die");
      const next = await session.run("'again'");
      expect(next.value).toBe("again");
      expect(next.stderr).toMatch(/ended between runs \(killed by SIGKILL\)/);
    });

    it("reports a floating rejected promise on stderr without ending the child", async () => {
      await open();
      const pid = executor.pid;
      const r = await session.run("Promise.reject(new Error('floating')); await new Promise((r) => setTimeout(r, 20)); 7");
      expect(r.value).toBe(7);
      expect(r.stderr).toContain("Unhandled promise rejection: Error: floating");
      expect(executor.pid).toBe(pid);
    });
  });

  describe("lifecycle", () => {
    it("leaves no child process after close(), and close() is idempotent", async () => {
      await open();
      await session.run("1");
      const pid = executor.pid;
      expect(isAlive(pid)).toBe(true);
      await session.close();
      await session.close();
      expect(isAlive(pid)).toBe(false);
      const r = await session.run("1");
      expect(r.ok).toBe(false);
      expect(r.error?.name).toBe("SessionClosedError");
    });

    it("close() during a run ends the run and the child", async () => {
      await open();
      const pid = executor.pid;
      const running = session.run("await new Promise(() => {})", { timeoutMs: 60_000 });
      await new Promise((r) => setTimeout(r, 50));
      await session.close();
      const r = await running;
      expect(r.ok).toBe(false);
      expect(isAlive(pid)).toBe(false);
    });

    it("reset() replaces the child: variables go, workflows and artifacts stay", async () => {
      await open();
      await session.run("var v = 1; await workflows.create({ name: 'double', source: 'export async function run({ n }: { n: number }) { return n * 2 }' }); await artifacts.save('a.txt', 'kept')");
      const pid = executor.pid;
      await session.reset();
      expect(isAlive(pid)).toBe(false);
      const r = await session.run("[typeof v, await workflows.double({ n: 4 }), await artifacts.load('a.txt')]");
      expect(r.value).toEqual(["undefined", 8, "kept"]);
    });
  });

  describe("RPC", () => {
    it("runs five tool calls awaited with Promise.all at the same time", async () => {
      await open();
      const r = await session.run("await Promise.all([1, 2, 3, 4, 5].map(() => tools.probe.sleep({ ms: 200 })))");
      expect(r.ok).toBe(true);
      expect(probe.maxInFlight).toBe(5);
    });

    it("carries structured-clone values both ways, bytes included", async () => {
      await open();
      const r = await session.run("await tools.probe.echo({ value: new Map([[1, new Set([2n])], [2, new Date(0)]]) })");
      const value = r.value as Map<number, unknown>;
      expect(value).toBeInstanceOf(Map);
      expect(value.get(1)).toEqual(new Set([2n]));
      expect(value.get(2)).toEqual(new Date(0));
      const bytes = await session.run("await artifacts.save('b.bin', new Uint8Array([0, 255, 7])); await artifacts.load('b.bin')");
      expect(bytes.value).toBeInstanceOf(Uint8Array);
      expect([...(bytes.value as Uint8Array)]).toEqual([0, 255, 7]);
    });

    it("returns a value that cannot be cloned as display only, without an error", async () => {
      await open();
      const r = await session.run("({ n: 1, f() {} })");
      expect(r.ok).toBe(true);
      expect(r.value).toBeUndefined();
      expect(r.display).toContain("[Function: f]");
    });

    it("refuses arguments that cannot cross, naming the call", async () => {
      await open();
      const r = await session.run("await tools.probe.echo({ value: () => 1 })");
      expect(r.ok).toBe(false);
      expect(r.error?.message).toMatch(/^tools\.call: arguments must be plain data/);
    });

    it("keeps the agent's stdout and stderr apart from the protocol", async () => {
      await open();
      const r = await session.run("console.log('out'); process.stdout.write('raw\\n'); console.error('err'); 1");
      expect(r.stdout).toBe("out\nraw\n");
      expect(r.stderr).toBe("err\n");
      expect(r.value).toBe(1);
    });
  });

  describe("permissions (Node's permission model)", () => {
    it("allows reads and writes only where granted, and no child processes", async () => {
      const readable = await mkdtemp(path.join(os.tmpdir(), "tcm-read-"));
      try {
        await writeFile(path.join(readable, "in.txt"), "hello");
        await open({ permissions: { fsRead: [readable] } });
        const fs = "const fs = require('node:fs');";
        const read = await session.run(`${fs} fs.readFileSync(${JSON.stringify(path.join(readable, "in.txt"))}, 'utf8')`);
        expect(read.value).toBe("hello");
        const write = await session.run(`${fs} fs.writeFileSync(${JSON.stringify(path.join(readable, "out.txt"))}, 'x')`);
        expect(write.ok).toBe(false);
        expect(write.error?.message).toMatch(/restricted|denied/i);
        const outside = await session.run(`${fs} fs.readFileSync('/etc/hostname', 'utf8')`);
        expect(outside.ok).toBe(false);
        const spawn = await session.run("require('node:child_process').execSync('true')");
        expect(spawn.ok).toBe(false);
        // The host still answers namespace calls: storage is outside the child's reach but not the agent's.
        expect((await session.run("await artifacts.save('p.txt', 'ok'); await artifacts.load('p.txt')")).value).toBe("ok");
      } finally {
        await rm(readable, { recursive: true, force: true, maxRetries: 5 });
      }
    });
  });

  describe("options", () => {
    it("rejects unknown and out-of-range options with what is accepted", () => {
      expect(() => new SubprocessExecutor({ maxMemory: 10 } as unknown as SubprocessExecutorOptions)).toThrow(/Accepted: .*maxMemoryMb/);
      expect(() => new SubprocessExecutor({ maxMemoryMb: 1 })).toThrow(/at least 16 MB/);
      expect(() => new SubprocessExecutor({ defaultTimeoutMs: 0 })).toThrow(/defaultTimeoutMs/);
    });

    it("reports its capabilities honestly", () => {
      const caps = new SubprocessExecutor().capabilities();
      expect(caps.capabilities).toEqual(expect.arrayContaining(["timeout", "processIsolation", "memoryLimit", "reset"]));
      expect(caps.capabilities).not.toContain("networkIsolation");
      expect(caps.notes.join(" ")).toMatch(/network/i);
    });
  });
});
