/**
 * Session itself, apart from any executor's behaviour (that is the executor conformance suite):
 * constructor misuse fails fast with a TypeError, `Session.fromBase` builds a started session on
 * one folder, `start()` is safe to repeat, and capabilities are answered from the executor.
 */
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../src/execution/in-process/executor.js";
import type { CapabilityReport, ExecutionResult, Executor, RunOptions } from "../src/execution/protocol.js";
import type { HostServices } from "../src/execution/host.js";
import { Session } from "../src/session.js";
import { FileStorage } from "../src/storage/file/storage.js";
import type { StorageBackend } from "../src/storage/protocol.js";

const HELLO_TOOL = `
name: hello
description: Say hello
command: echo
schema:
  positional:
    - { name: who, type: string, required: true, description: Who to greet }
recipes:
  greet:
    description: Greet someone
    preset: {}
    params:
      who: {}
`;

/** A real InProcessExecutor that counts how often the session starts it. */
class CountingExecutor implements Executor {
  readonly kind = "counting";
  starts = 0;
  closes = 0;
  constructor(private readonly inner: InProcessExecutor) {}
  get host(): HostServices | null {
    return this.inner.host;
  }
  capabilities(): CapabilityReport {
    return this.inner.capabilities();
  }
  async start(storage: StorageBackend): Promise<void> {
    this.starts++;
    await this.inner.start(storage);
  }
  run(code: string, options?: RunOptions): Promise<ExecutionResult> {
    return this.inner.run(code, options);
  }
  reset(): Promise<void> {
    return this.inner.reset();
  }
  async close(): Promise<void> {
    this.closes++;
    await this.inner.close();
  }
}

describe("Session", () => {
  let dir: string;
  const sessions: Session[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-session-"));
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  const storage = () => new FileStorage({ basePath: dir });
  const track = (s: Session) => (sessions.push(s), s);

  describe("constructor misuse throws a TypeError at once", () => {
    const cases: Array<[string, () => unknown, RegExp]> = [
      ["no options", () => new Session(undefined as never), /options/],
      ["null options", () => new Session(null as never), /options/],
      ["no storage", () => new Session({} as never), /storage/],
      ["storage not a backend (a path string)", () => new Session({ storage: "./storage" } as never), /storage.*StorageBackend/],
      ["storage not a backend (a plain object)", () => new Session({ storage: { workflows: 1 } } as never), /storage/],
      ["executor as a string", () => new Session({ storage: storage(), executor: "subprocess" } as never), /executor.*string.*"subprocess"/],
      ["executor an object without run", () => new Session({ storage: storage(), executor: { start: async () => {}, close: async () => {} } } as never), /run\(\)/],
      ["executor a number", () => new Session({ storage: storage(), executor: 5 } as never), /executor/],
    ];
    it.each(cases)("%s", (_title, make, message) => {
      expect(make).toThrow(TypeError);
      expect(make).toThrow(message);
    });
  });

  it("an omitted executor means the default SubprocessExecutor (not started yet)", async () => {
    const s = track(new Session({ storage: storage() }));
    expect(s.executor.kind).toBe("subprocess");
    expect(s.executor.host).toBeNull();
  });

  describe("Session.fromBase", () => {
    it("creates a missing folder with workflows/ and artifacts/, and returns a started session", async () => {
      const base = path.join(dir, "nested", "code-mode");
      const s = track(await Session.fromBase(base));
      for (const sub of ["", "workflows", "artifacts"]) expect((await stat(path.join(base, sub))).isDirectory()).toBe(true);
      expect(s.executor.host).not.toBeNull();
      expect(s.storage.toDescriptor()).toEqual({ type: "file", basePath: base });
      expect(await s.listTools()).toEqual([]);
      expect((await s.run("40 + 2")).value).toBe(42);
    });

    it("loads tools from <base>/tools and stores workflows and artifacts under <base>", async () => {
      await mkdir(path.join(dir, "tools"), { recursive: true });
      await writeFile(path.join(dir, "tools", "hello.yaml"), HELLO_TOOL);
      const s = track(await Session.fromBase(dir));
      expect((await s.listTools()).map((t) => t.name)).toEqual(["hello"]);
      const r = await s.run("await artifacts.save('greeting.txt', await tools.hello.greet({ who: 'base' })); await artifacts.load('greeting.txt')");
      expect(r.error).toBeNull();
      expect(r.value).toBe("base\n");
      expect((await stat(path.join(dir, "artifacts", "greeting.txt"))).isFile()).toBe(true);
    });

    it("uses a given executor and passes defaultTimeoutMs to the one it creates", async () => {
      const executor = new InProcessExecutor({ toolsPath: path.join(dir, "tools") });
      const given = track(await Session.fromBase(dir, { executor }));
      expect(given.executor).toBe(executor);
      expect(given.executor.host).not.toBeNull();

      const timed = track(await Session.fromBase(path.join(dir, "other"), { defaultTimeoutMs: 200 }));
      const r = await timed.run("while (true) {}");
      expect(r.error?.name).toBe("TimeoutError");
      expect(r.error?.message).toContain("200");
    });

    it("refuses an executor without a toolsPath when <base>/tools exists, rather than offering no tools", async () => {
      await mkdir(path.join(dir, "tools"), { recursive: true });
      await writeFile(path.join(dir, "tools", "hello.yaml"), HELLO_TOOL);
      const err = await Session.fromBase(dir, { executor: new InProcessExecutor() }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).name).toBe("ValidationError");
      expect((err as Error).message).toContain(`new InProcessExecutor({ toolsPath: ${JSON.stringify(path.join(dir, "tools"))} })`);
      // Without a tools folder there is nothing to miss.
      const empty = track(await Session.fromBase(path.join(dir, "bare"), { executor: new InProcessExecutor() }));
      expect(await empty.listTools()).toEqual([]);
    });

    it("rejects an empty base", async () => {
      await expect(Session.fromBase("")).rejects.toThrow(TypeError);
    });

    it("reads tool files on first use: a broken one fails every tools.* use with its name, and nothing else", async () => {
      await mkdir(path.join(dir, "tools"), { recursive: true });
      await writeFile(path.join(dir, "tools", "broken.yaml"), "name: [not, a, name\n");
      const s = track(await Session.fromBase(dir));
      expect((await s.run("1 + 1")).value).toBe(2);
      await expect(s.listTools()).rejects.toThrow(/broken\.yaml/);
      for (const code of ["await tools.list()", "await tools.search('x')", "await tools.anything.at_all({})"]) {
        const r = await s.run(code);
        expect(r.ok).toBe(false);
        expect(r.error?.name).toBe("ValidationError");
        expect(r.error?.message).toMatch(/broken\.yaml/);
      }
    });

    it("a tool file fixed before the first tools.* use is the one loaded", async () => {
      await mkdir(path.join(dir, "tools"), { recursive: true });
      await writeFile(path.join(dir, "tools", "late.yaml"), "name: [not, a, name\n");
      const s = track(await Session.fromBase(dir));
      await writeFile(path.join(dir, "tools", "late.yaml"), "name: late\ndescription: written after start\ncommand: echo\n");
      expect((await s.listTools()).map((t) => t.name)).toEqual(["late"]);
    });
  });

  describe("start()", () => {
    it("twice, or twice at once, starts the executor once", async () => {
      const executor = new CountingExecutor(new InProcessExecutor());
      const s = track(new Session({ storage: storage(), executor }));
      await s.start();
      await s.start();
      await Promise.all([s.start(), s.start(), s.run("1")]);
      expect(executor.starts).toBe(1);
      expect((await s.run("'still fine'")).value).toBe("still fine");
    });

    it("run() starts an unstarted session; close() closes the executor once", async () => {
      const executor = new CountingExecutor(new InProcessExecutor());
      const s = new Session({ storage: storage(), executor });
      expect((await s.run("1 + 1")).value).toBe(2);
      expect(executor.starts).toBe(1);
      await s.close();
      await s.close();
      expect(executor.closes).toBe(1);
    });

    it("after close() it throws a TypeError", async () => {
      const s = new Session({ storage: storage(), executor: new InProcessExecutor() });
      await s.close();
      await expect(s.start()).rejects.toThrow(TypeError);
    });

    it("a start failure is reported, and a run returns it as ok:false instead of throwing", async () => {
      const executor = new CountingExecutor(new InProcessExecutor());
      executor.start = () => Promise.reject(new Error("the guest runtime is missing (bad install)"));
      const s = track(new Session({ storage: storage(), executor }));
      await expect(s.start()).rejects.toThrow(/bad install/);
      const r = await s.run("1");
      expect(r.ok).toBe(false);
      expect(r.error?.message).toMatch(/could not start/);
      expect(r.error?.message).toMatch(/bad install/);
    });
  });

  describe("capabilities", () => {
    it("supports() answers from the executor", async () => {
      const s = track(new Session({ storage: storage(), executor: new InProcessExecutor() }));
      expect(s.supports("timeout")).toBe(true);
      expect(s.supports("reset")).toBe(true);
      expect(s.supports("processIsolation")).toBe(false);
      expect(s.capabilities()).toEqual(s.executor.capabilities());
    });

    it("the default executor declares process isolation", () => {
      const s = track(new Session({ storage: storage() }));
      expect(s.supports("timeout")).toBe(true);
      expect(s.supports("processIsolation")).toBe(true);
    });
  });

  describe("run() options", () => {
    it.each([[-5], [0], [2.5], [Number.NaN], [1e12]])("an invalid timeoutMs %s is a ValidationError result", async (bad) => {
      const s = track(new Session({ storage: storage(), executor: new InProcessExecutor() }));
      const r = await s.run("1", { timeoutMs: bad });
      expect(r.ok).toBe(false);
      expect(r.error?.name).toBe("ValidationError");
      expect(r.error?.message).toMatch(/timeoutMs/);
    });
  });

  describe("after close()", () => {
    it("run() resolves with SessionClosedError, reset() is a no-op and the facade throws", async () => {
      const s = new Session({ storage: storage(), executor: new InProcessExecutor() });
      await s.start();
      await s.close();
      expect(s.isClosed).toBe(true);
      expect((await s.run("1")).error?.name).toBe("SessionClosedError");
      await expect(s.reset()).resolves.toBeUndefined();
      await expect(s.listTools()).rejects.toThrow(/closed/);
      await expect(s.listWorkflows()).rejects.toThrow(/closed/);
    });

    it("the storage given to the session stays usable", async () => {
      const st = storage();
      const s = new Session({ storage: st, executor: new InProcessExecutor() });
      await s.saveArtifact("kept.txt", "kept");
      await s.close();
      expect(await st.artifacts.load("kept.txt")).toBe("kept");
    });
  });
});
