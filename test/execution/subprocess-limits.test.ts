/**
 * SubprocessExecutor's limits are real (issue 13, principle 7), checked on real child processes:
 *   - maxMemoryMb caps the whole process, memory outside V8's heap (Buffers, ArrayBuffers) included;
 *   - processes the agent's code starts — plainly, `detached`, with `nohup … &`, or `setsid` and a
 *     double fork — do not survive reset(), close() or a timeout restart (checked with `ps`);
 *   - every message the child sends is validated and size-checked: a forged result with a
 *     50 M-character display is refused and the child replaced.
 */
import { randomInt } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SubprocessExecutor, type SubprocessExecutorOptions } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";
import { processesWith, waitFor } from "../helpers/processes.js";

const onLinux = process.platform === "linux";

describe("SubprocessExecutor limits", () => {
  let dir: string;
  let session: Session;
  let executor: SubprocessExecutor;
  let probe: ProbeAdapter;
  const sessions: Session[] = [];

  async function open(options: SubprocessExecutorOptions = {}): Promise<Session> {
    probe = new ProbeAdapter();
    const tools = new ToolRegistry();
    tools.register(probe);
    executor = new SubprocessExecutor({ defaultTimeoutMs: 10_000, tools, ...options });
    session = new Session({ storage: new FileStorage({ basePath: dir }), executor });
    sessions.push(session);
    await session.start();
    return session;
  }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-sub-limits-"));
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  describe.runIf(onLinux)("maxMemoryMb caps the whole process", () => {
    for (const [label, alloc] of [
      ["Buffers", "Buffer.alloc(8 * 1024 * 1024, 1)"],
      ["ArrayBuffers", "new Uint8Array(8 * 1024 * 1024).fill(1)"],
    ] as const) {
      it(`memory outside V8's heap (${label}) past the cap is a MemoryLimitError, then the next run works`, async () => {
        await open({ maxMemoryMb: 64 });
        // 800 MB in 8 MB steps; each step is awaited so the run is observable while it grows.
        const r = await session.run(`const kept: unknown[] = []; for (let i = 0; i < 100; i++) { kept.push(${alloc}); await new Promise((r) => setImmediate(r)); } 'survived with ' + kept.length * 8 + ' MB'`, {
          timeoutMs: 30_000,
        });
        expect(r.value).toBeUndefined();
        expect(r.error?.name).toBe("MemoryLimitError");
        expect(r.error?.message).toMatch(/64 MB \(maxMemoryMb\)/);
        expect(r.error?.message).toMatch(/resident memory reached \d+ MB/);
        expect((await session.run("1 + 1")).value).toBe(2);
      });
    }

    it("code that stays under the cap is not stopped", async () => {
      await open({ maxMemoryMb: 128 });
      const r = await session.run("const small = Buffer.alloc(16 * 1024 * 1024, 1); small.length");
      expect(r.error).toBeNull();
      expect(r.value).toBe(16 * 1024 * 1024);
    });

    it("capabilities() says how the cap is enforced", () => {
      const notes = new SubprocessExecutor({ maxMemoryMb: 64 }).capabilities().notes.join(" ");
      expect(notes).toMatch(/resident memory/);
      expect(notes).toMatch(/Buffers/);
    });
  });

  describe.runIf(onLinux)("processes the agent's code started do not survive", () => {
    /** Starts four `sleep`s, each a different way, tagged with a unique duration; returns the tag. */
    async function startSleepers(): Promise<string> {
      const tag = `4${randomInt(100, 999)}.${randomInt(1000, 9999)}`;
      const r = await session.run(`
        const cp = require("node:child_process");
        cp.spawn("sleep", ["${tag}1"], { stdio: "ignore" });
        cp.spawn("sleep", ["${tag}2"], { stdio: "ignore", detached: true }).unref();
        cp.spawn("sh", ["-c", "nohup sleep ${tag}3 >/dev/null 2>&1 &"], { stdio: "ignore" });
        cp.spawn("sh", ["-c", "setsid sh -c 'sleep ${tag}4 & exit 0' >/dev/null 2>&1 &"], { stdio: "ignore", detached: true }).unref();
        "started"`);
      expect(r.error).toBeNull();
      await waitFor(() => processesWith(`sleep ${tag}`).length === 4, "the four sleeps to start");
      return tag;
    }

    it("reset() ends plain, detached, nohup and setsid+double-fork children", async () => {
      await open();
      const tag = await startSleepers();
      await session.reset();
      expect(processesWith(`sleep ${tag}`)).toEqual([]);
      expect((await session.run("'still works'")).value).toBe("still works");
    });

    it("close() ends them too", async () => {
      await open();
      const tag = await startSleepers();
      await session.close();
      expect(processesWith(`sleep ${tag}`)).toEqual([]);
    });

    it("a busy run stopped at its timeout (the child restarted) ends what it started", async () => {
      await open();
      const tag = await startSleepers();
      // Busy (a microtask storm): the child cannot stop in place and is replaced. An idle run that
      // times out keeps its child, and what earlier runs started lives on as after any run.
      const r = await session.run("for (;;) await null", { timeoutMs: 300 });
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/variables .* lost/);
      expect(processesWith(`sleep ${tag}`)).toEqual([]);
    });
  });

  describe("maxInFlightBytes is an executor option", () => {
    const parallelLoads = `
      await artifacts.save("big", "x".repeat(300 * 1024));
      const rs = await Promise.allSettled(Array.from({ length: 8 }, () => artifacts.load("big")));
      const sequential = [];
      for (let i = 0; i < 8; i++) sequential.push((await artifacts.load("big")).length);
      ({ loaded: rs.filter((r) => r.status === "fulfilled").length, refused: rs.filter((r) => r.status === "rejected").map((r) => r.reason.name + ": " + r.reason.message), sequential })`;

    it("a small limit refuses parallel loads past it with a ValidationError; one at a time they all succeed", async () => {
      await open({ maxInFlightBytes: 1_024 * 1_024 });
      const r = await session.run(parallelLoads);
      expect(r.error).toBeNull();
      const { loaded, refused, sequential } = r.value as { loaded: number; refused: string[]; sequential: number[] };
      // A reply's bytes are given back once it is sent, so how many of the eight overlap (at most
      // three of 300 KB fit in 1 MB) depends on how their messages and reads interleave: a CI run
      // saw four succeed. The exact bound is held by InFlightBytes (in-flight.test.ts); here, that
      // the executor option reaches it and that a refusal says what to do.
      expect(loaded).toBeGreaterThan(0);
      expect(loaded).toBeLessThan(8);
      expect(refused).toHaveLength(8 - loaded);
      for (const reason of refused) expect(reason).toMatch(/^ValidationError: .*artifacts\.load: the namespace calls in flight already hold .* of 1 MB .*await some calls before starting more/);
      expect(sequential).toEqual(Array(8).fill(300 * 1_024));
    });

    it("by default the same loads all succeed", async () => {
      await open();
      const r = await session.run(parallelLoads);
      expect(r.error).toBeNull();
      expect(r.value).toMatchObject({ loaded: 8, refused: [] });
    });

    it("a value that is not a whole number of bytes is refused when the executor is made", () => {
      expect(() => new SubprocessExecutor({ maxInFlightBytes: 0.5 })).toThrow(/maxInFlightBytes: must be a whole number of bytes/);
    });
  });

  describe("messages from the child are validated", () => {
    it("a forged result with a 50 M-character display is refused and the child replaced", async () => {
      await open();
      const pid = executor.pid;
      // This session's first run has runId 1.
      const r = await session.run(
        "process.send({ type: 'result', runId: 1, result: { ok: true, value: 1, display: 'x'.repeat(50_000_000), stdout: '', stderr: '', error: null, durationMs: 0 } }); await new Promise(() => {})",
      );
      expect(r.ok).toBe(false);
      expect(r.display.length).toBeLessThan(1_000);
      expect(r.error?.name).toBe("ExecutorCrashError");
      expect(r.error?.message).toMatch(/outside the protocol \(result\.display: /);
      const next = await session.run("40 + 2");
      expect(next.value).toBe(42);
      expect(executor.pid).not.toBe(pid);
    });

    for (const [label, forged] of [
      ["a result of the wrong shape", "{ type: 'result', runId: 1, result: { ok: 'yes' } }"],
      ["a call with a 100,000-character namespace", "{ type: 'call', callId: 1, ns: 'n'.repeat(100_000), op: 'call', args: [] }"],
      ["a call whose args are not an array", "{ type: 'call', callId: 1, ns: 'tools', op: 'call', args: 'probe' }"],
      ["a fatal report with a 1 M-character message", "{ type: 'fatal', error: { name: 'Error', message: 'm'.repeat(1_000_000) } }"],
    ] as const) {
      it(`${label} ends the child with an error naming the problem; no tool is called`, async () => {
        await open();
        const r = await session.run(`process.send(${forged}); await new Promise(() => {})`);
        expect(r.ok).toBe(false);
        expect(r.error?.message).toMatch(/outside the protocol/);
        expect(probe.contexts).toHaveLength(0);
        expect((await session.run("'fresh'")).value).toBe("fresh");
      });
    }

    it("the child's own long error message is cut to fit, and the child is kept", async () => {
      await open();
      const pid = executor.pid;
      const r = await session.run("throw new Error('e'.repeat(1_000_000))");
      expect(r.error?.name).toBe("Error");
      expect(r.error!.message.length).toBeLessThan(25_000);
      expect(r.error?.message).toMatch(/more characters cut/);
      expect(executor.pid).toBe(pid);
    });
  });
});
