/**
 * InProcessExecutor: the shared executor conformance suite, plus what only this executor promises —
 * honest capabilities (no isolation, no memory limit, and it says what a timeout cannot stop),
 * stopping synchronous loops that run before the first await without losing variables, and
 * validation of its options.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { InProcessExecutor, type InProcessExecutorOptions } from "../../src/execution/in-process/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ProbeAdapter } from "../helpers/adapters.js";
import { EXAMPLE_TOOLS_PATH, executorConformance } from "../conformance/executor.js";

executorConformance("InProcessExecutor", (opts) => new InProcessExecutor(opts), { cancels: { syncLoop: false, microtaskLoop: false } });

describe("InProcessExecutor only", () => {
  let dir: string;
  const sessions: Session[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-inproc-"));
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  async function open(options: InProcessExecutorOptions = { toolsPath: EXAMPLE_TOOLS_PATH }): Promise<Session> {
    const session = new Session({ storage: new FileStorage({ basePath: dir }), executor: new InProcessExecutor(options) });
    sessions.push(session);
    await session.start();
    return session;
  }

  describe("capabilities()", () => {
    it("declares timeout, reset and deps install, and no isolation or memory limit", () => {
      const report = new InProcessExecutor().capabilities();
      expect(report.capabilities).toEqual(expect.arrayContaining(["timeout", "reset", "depsInstall"]));
      for (const missing of ["processIsolation", "networkIsolation", "filesystemIsolation", "memoryLimit"] as const) {
        expect(report.capabilities).not.toContain(missing);
      }
      expect(new InProcessExecutor({ allowRuntimeDeps: false }).capabilities().capabilities).not.toContain("depsInstall");
    });

    it("its notes say what a timeout cannot stop and that there is no isolation", () => {
      const notes = new InProcessExecutor().capabilities().notes.join("\n");
      expect(notes).toMatch(/await/);
      expect(notes).toMatch(/cannot be interrupted|cannot stop|can't stop/i);
      expect(notes).toMatch(/isolation/i);
      expect(notes).toMatch(/memory/i);
    });

    it("the session reports the same through supports()", async () => {
      const s = await open();
      expect(s.supports("timeout")).toBe(true);
      expect(s.supports("reset")).toBe(true);
      expect(s.supports("processIsolation")).toBe(false);
      expect(s.supports("memoryLimit")).toBe(false);
      expect(s.executor.kind).toBe("in-process");
    });
  });

  describe("timeouts", () => {
    it.each([
      ["while (true) {}"],
      ["for (;;) {}"],
      ["let n = 0; while (n >= 0) { n = (n + 1) % 1000; }"],
      ["function spin(): never { for (;;) {} } spin()"],
      ["[1].forEach(() => { while (true) {} })"],
    ])("stops the synchronous loop %s that runs before any await and keeps variables", async (loop) => {
      const s = await open();
      expect((await s.run("var beforeLoop = 'kept';")).ok).toBe(true);
      const r = await s.run(loop, { timeoutMs: 100 });
      expect(r.ok).toBe(false);
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toMatch(/variables are kept/);
      expect((await s.run("beforeLoop")).value).toBe("kept");
    });

    it("the executor's defaultTimeoutMs applies when run() gives none", async () => {
      const s = await open({ toolsPath: EXAMPLE_TOOLS_PATH, defaultTimeoutMs: 100 });
      const r = await s.run("while (true) {}");
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toContain("100");
    });

    it("an async run past its deadline returns TimeoutError, its timers are cleared and the session goes on", async () => {
      const s = await open();
      const r = await s.run("var fired = false; setTimeout(() => { fired = true; }, 300); await new Promise(() => {})", { timeoutMs: 100 });
      expect(r.error?.name).toBe("TimeoutError");
      // Wait past the timer's due time: a cleared timer never fires.
      expect((await s.run("await new Promise((r) => setTimeout(r, 400)); fired")).value).toBe(false);
    });

    it("an invalid per-run timeoutMs is a ValidationError result", async () => {
      const s = await open();
      for (const bad of [-1, 0, 1.5, Number.NaN]) {
        const r = await s.run("1", { timeoutMs: bad });
        expect(r.ok, String(bad)).toBe(false);
        expect(r.error?.name).toBe("ValidationError");
      }
    });
  });

  describe("options", () => {
    it("rejects an unknown option key, naming it", () => {
      expect(() => new InProcessExecutor({ toolPath: "x" } as unknown as InProcessExecutorOptions)).toThrow(ValidationError);
      expect(() => new InProcessExecutor({ toolPath: "x" } as unknown as InProcessExecutorOptions)).toThrow(/toolPath/);
    });

    it.each([[-1], [0], [1.5], [Number.POSITIVE_INFINITY], ["1000"]])("rejects defaultTimeoutMs %s", (bad) => {
      expect(() => new InProcessExecutor({ defaultTimeoutMs: bad as number })).toThrow(/defaultTimeoutMs/);
    });

    it("rejects an empty or non-string toolsPath", () => {
      expect(() => new InProcessExecutor({ toolsPath: "" })).toThrow(ValidationError);
      expect(() => new InProcessExecutor({ toolsPath: 3 as unknown as string })).toThrow(ValidationError);
    });

    it("accepts no options: no tools, and runs code", async () => {
      const s = await open({});
      expect(await s.listTools()).toEqual([]);
      expect((await s.run("6 * 7")).value).toBe(42);
    });

    it("a missing toolsPath folder means no tools", async () => {
      const s = await open({ toolsPath: path.join(dir, "no-such-folder") });
      expect(await s.listTools()).toEqual([]);
      const r = await s.run("await tools.echo.say({ text: ['x'] })");
      expect(r.error?.message).toMatch(/No tools are configured/);
    });

    it("a ready ToolRegistry (in-process adapters) wins over toolsPath", async () => {
      const registry = new ToolRegistry();
      registry.register(new ProbeAdapter());
      const s = await open({ toolsPath: EXAMPLE_TOOLS_PATH, tools: registry });
      expect((await s.listTools()).map((t) => t.name)).toEqual(["probe"]);
      expect((await s.run("await tools.probe.echo({ value: { deep: [1, 2] } })")).value).toEqual({ deep: [1, 2] });
    });
  });

  describe("lifecycle without a Session", () => {
    it("run() before start() and after close() is ok:false with SessionClosedError", async () => {
      const executor = new InProcessExecutor();
      expect((await executor.run("1")).error?.name).toBe("SessionClosedError");
      await executor.start(new FileStorage({ basePath: dir }));
      expect(executor.host).not.toBeNull();
      expect((await executor.run("1")).value).toBe(1);
      await executor.close();
      await executor.close();
      expect(executor.host).toBeNull();
      expect((await executor.run("1")).error?.name).toBe("SessionClosedError");
      await expect(executor.start(new FileStorage({ basePath: dir }))).rejects.toThrow(/closed/);
    });
  });
});
