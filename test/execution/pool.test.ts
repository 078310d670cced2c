/**
 * ExecutorPool with real child processes: a pooled session's child is already running before
 * start(), each spare serves one session only, close() leaves no child, and a spare whose child
 * died while idle is replaced rather than handed out.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ExecutorPool } from "../../src/execution/pool.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { processesWith, waitFor } from "../helpers/processes.js";

const running = (pid: number): boolean => processesWith(String(pid)).some((p) => p.pid === pid);

describe("ExecutorPool", () => {
  let dir: string;
  let storage: FileStorage;
  let pool: ExecutorPool | undefined;
  const created: SubprocessExecutor[] = [];
  const sessions: Session[] = [];

  const subprocess = (): SubprocessExecutor => {
    const e = new SubprocessExecutor({ defaultTimeoutMs: 5_000 });
    created.push(e);
    return e;
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "tcm-pool-"));
    storage = new FileStorage({ basePath: dir });
  });

  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    await pool?.close();
    pool = undefined;
    await Promise.all(created.splice(0).map((e) => e.close()));
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  async function sessionFrom(p: ExecutorPool): Promise<{ session: Session; executor: SubprocessExecutor; pidBeforeStart: number | undefined }> {
    const executor = p.take() as SubprocessExecutor;
    const pidBeforeStart = executor.pid;
    const session = new Session({ storage, executor });
    sessions.push(session);
    await session.start();
    return { session, executor, pidBeforeStart };
  }

  it("hands a session a running child; consecutive spares share no variables and are never reused", async () => {
    pool = new ExecutorPool(subprocess, { likelyStorage: storage });
    await waitFor(() => pool?.ready === 1, "a spare");
    const a = await sessionFrom(pool);
    // The child ran before start(): the session bound it instead of spawning one.
    expect(a.pidBeforeStart).toBeDefined();
    expect(a.executor.pid).toBe(a.pidBeforeStart);
    expect((await a.session.run("globalThis.leak = 'a'; var secret = 41; secret + 1")).value).toBe(42);

    await waitFor(() => pool?.ready === 1, "the pool to refill");
    const b = await sessionFrom(pool);
    expect(b.pidBeforeStart).toBeDefined();
    expect(b.executor).not.toBe(a.executor);
    expect(b.pidBeforeStart).not.toBe(a.pidBeforeStart);
    expect((await b.session.run("[typeof secret, typeof globalThis.leak]")).value).toEqual(["undefined", "undefined"]);

    // A session's executor is closed with it, not returned to the pool.
    const aPid = a.pidBeforeStart as number;
    await a.session.close();
    expect(running(aPid)).toBe(false);
    await waitFor(() => pool?.ready === 1, "the pool to refill");
    const c = await sessionFrom(pool);
    expect([a.pidBeforeStart, b.pidBeforeStart]).not.toContain(c.pidBeforeStart);
  });

  it("close() kills every spare's child", async () => {
    pool = new ExecutorPool(subprocess, { spares: 2, likelyStorage: storage });
    await waitFor(() => pool?.ready === 2, "two spares");
    const pids = created.map((e) => e.pid).filter((p): p is number => p !== undefined);
    expect(pids).toHaveLength(2);
    expect(pids.every(running)).toBe(true);
    await pool.close();
    expect(pids.filter(running)).toEqual([]);
  });

  it("hands out a spare whose child is still starting rather than spawning another, and close() kills starting ones", async () => {
    pool = new ExecutorPool(subprocess, { spares: 2, likelyStorage: storage });
    const { session, executor, pidBeforeStart } = await sessionFrom(pool);
    expect(created.indexOf(executor as SubprocessExecutor)).toBeLessThan(2);
    expect(pidBeforeStart).toBeDefined();
    expect((await session.run("1 + 1")).value).toBe(2);
    const other = created.find((e) => e !== executor);
    const pid = other?.pid as number;
    expect(running(pid)).toBe(true);
    await pool.close();
    expect(running(pid)).toBe(false);
  });

  it("a spare handed out while still starting is replaced once it is ready, not beside its start", async () => {
    pool = new ExecutorPool(subprocess, { likelyStorage: storage });
    const spare = created[0] as SubprocessExecutor;
    // Stopped before this thread could read its ready message: the spare cannot finish starting.
    process.kill(spare.pid as number, "SIGSTOP");
    expect(pool.take()).toBe(spare);
    // Longer than the pool's refill delay after a take: no second child starts beside this one's start.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(created).toHaveLength(1);
    process.kill(spare.pid as number, "SIGCONT");
    await waitFor(() => created.length === 2, "the replacement spare", 60_000);
  });

  it("close() right after construction kills the children still starting", async () => {
    pool = new ExecutorPool(subprocess, { spares: 2, likelyStorage: storage });
    const pids = created.map((e) => e.pid as number);
    expect(pids).toHaveLength(2);
    await pool.close();
    expect(pids.filter(running)).toEqual([]);
  });

  it("replaces a spare whose child died while idle instead of handing it out", async () => {
    pool = new ExecutorPool(subprocess, { likelyStorage: storage });
    await waitFor(() => pool?.ready === 1, "a spare");
    const dead = created[0] as SubprocessExecutor;
    process.kill(dead.pid as number, "SIGKILL");
    await waitFor(() => created.length === 2 && pool?.ready === 1, "a replacement spare");
    const { session, executor, pidBeforeStart } = await sessionFrom(pool);
    expect(executor).not.toBe(dead);
    expect(pidBeforeStart).toBeDefined();
    const r = await session.run("1 + 1");
    expect(r.value).toBe(2);
    expect(r.stderr).not.toMatch(/ended between runs/);
  });

  it("replaces a prestarted child when the session's storage has another deps folder", async () => {
    const other = await mkdtemp(path.join(os.tmpdir(), "tcm-pool-other-"));
    try {
      const executor = subprocess();
      await executor.prestart(storage);
      const spawnedFor = executor.pid;
      const session = new Session({ storage: new FileStorage({ basePath: other }), executor });
      sessions.push(session);
      await session.start();
      expect(executor.pid).toBeDefined();
      expect(executor.pid).not.toBe(spawnedFor);
      expect(running(spawnedFor as number)).toBe(false);
      expect((await session.run("2 * 21")).value).toBe(42);
    } finally {
      await rm(other, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("hands out new executors of kinds that cannot prestart", async () => {
    pool = new ExecutorPool(() => new InProcessExecutor());
    const first = pool.take();
    const second = pool.take();
    expect(first).not.toBe(second);
    expect(pool.ready).toBe(0);
    await Promise.all([first.close(), second.close()]);
  });

  it("rejects a spares count out of range", () => {
    expect(() => new ExecutorPool(subprocess, { spares: -1 })).toThrow(/spares must be a whole number/);
    expect(created).toHaveLength(0);
  });
});
