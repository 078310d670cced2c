/**
 * Issue 35.3: a run's timeout fences its storage writes. A run times out while its artifacts.save
 * waits on a frozen Redis (redis-server SIGSTOPped); once the server runs again, the save must not
 * be applied: the agent was told TimeoutError. Without the fence the write waiting in the socket
 * landed as soon as the server resumed (15 of 15 trials in the issue). FileStorage refuses a commit
 * that could end after the deadline the same way.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import type { Executor } from "../../src/execution/protocol.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { RedisStorage } from "../../src/storage/redis/storage.js";
import { withWriteDeadline } from "../../src/storage/write-deadline.js";
import { atIssueScale, reportFaults } from "../helpers/fault-report.js";
import { startRedis, uniquePrefix, type RedisServer } from "../helpers/redis.js";

let server: RedisServer;

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  server.resume();
  await server.close();
});

const executors: Array<[string, () => Executor]> = [
  ["in-process", () => new InProcessExecutor()],
  ["subprocess", () => new SubprocessExecutor()],
];

describe("a run's timeout fences its writes (issue 35.3)", () => {
  for (const [kind, make] of executors) {
    it(`${kind}: artifacts.save waiting on a SIGSTOPped Redis when the run times out is never applied after the server resumes`, { timeout: 180_000 }, async () => {
      // The issue saw the late write land in 15 of 15 trials: as many at the default faults scale.
      const trials = atIssueScale(3, 15);
      let applied = 0;
      const seen: string[] = [];
      for (let trial = 0; trial < trials; trial++) {
        const prefix = uniquePrefix("deadline");
        const storage = new RedisStorage({ url: server.url, prefix });
        const session = new Session({ storage, executor: make() });
        try {
          const before = await session.run('await artifacts.save("a", "before"); "ok"', { timeoutMs: 30_000 });
          expect(before.error).toBeNull();
          server.pause();
          const r = await session.run(`await artifacts.save("a", "late-${trial}"); "saved"`, { timeoutMs: 1_000 });
          expect(r.error?.name, JSON.stringify(r.error)).toBe("TimeoutError");
          // The run reported its timeout; now the server reads what waits in its sockets.
          server.resume();
          const check = new RedisStorage({ url: server.url, prefix });
          try {
            await new Promise((res) => setTimeout(res, 500));
            const value = await check.artifacts.load("a");
            seen.push(String(value));
            if (value !== "before") applied++;
          } finally {
            await check.close();
          }
        } finally {
          server.resume();
          await session.close();
          await storage.close();
        }
      }
      reportFaults({ trial: `Redis frozen during a ${kind} run's save, run timed out`, runs: trials, appliedAfterFailure: applied });
      expect({ applied, seen }).toEqual({ applied: 0, seen: seen.map(() => "before") });
    });
  }

  it("a Redis write whose deadline has passed when the script runs fails with DEADLINE and is not applied; one before it is", async () => {
    const storage = new RedisStorage({ url: server.url, prefix: uniquePrefix("deadline-direct") });
    try {
      await withWriteDeadline(Date.now() + 10_000, () => storage.artifacts.save("a", "in time"));
      expect(await storage.artifacts.load("a")).toBe("in time");
      const late = await withWriteDeadline(Date.now() - 1, () => storage.artifacts.save("a", "late")).catch((e: unknown) => e);
      expect(late).toMatchObject({ name: "StorageError", code: "DEADLINE" });
      const wf = await withWriteDeadline(Date.now() - 1, () => storage.workflows.save({ name: "w", source: "x", description: "", createdAt: "t", updatedAt: "t" })).catch((e: unknown) => e);
      expect(wf).toMatchObject({ name: "StorageError", code: "DEADLINE" });
      expect(await storage.artifacts.load("a")).toBe("in time");
      expect(await storage.workflows.get("w")).toBeNull();
    } finally {
      await storage.close();
    }
  });

  it("FileStorage: a save or delete whose commit could end after the deadline fails with DEADLINE and leaves the artifact as it was", async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), "tcm-deadline-"));
    const storage = new FileStorage({ basePath: base });
    try {
      await storage.artifacts.save("a", "before");
      const late = await withWriteDeadline(Date.now() + 100, () => storage.artifacts.save("a", "late")).catch((e: unknown) => e);
      expect(late).toMatchObject({ name: "StorageError", code: "DEADLINE" });
      const del = await withWriteDeadline(Date.now() + 100, () => storage.artifacts.delete("a")).catch((e: unknown) => e);
      expect(del).toMatchObject({ name: "StorageError", code: "DEADLINE" });
      expect(await storage.artifacts.load("a")).toBe("before");
      await withWriteDeadline(Date.now() + 10_000, () => storage.artifacts.save("a", "in time"));
      expect(await storage.artifacts.load("a")).toBe("in time");
    } finally {
      await storage.close();
      await rm(base, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("closing a session waits for a storage write its timed-out run left running: nothing of the run happens after close() resolves", { timeout: 60_000 }, async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), "tcm-close-drain-"));
    const storage = new FileStorage({ basePath: base });
    // The run's save waits at a gate the test opens only after close() was called.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let saveSettled = false;
    const save = storage.artifacts.save.bind(storage.artifacts);
    storage.artifacts.save = async (...args: Parameters<typeof save>) => {
      await gate;
      try {
        return await save(...args);
      } finally {
        saveSettled = true;
      }
    };
    const session = new Session({ storage, executor: new InProcessExecutor() });
    try {
      const r = await session.run('await artifacts.save("a", "late"); "saved"', { timeoutMs: 500 });
      expect(r.error?.name, JSON.stringify(r.error)).toBe("TimeoutError");
      const closed = session.close().then(() => saveSettled);
      setTimeout(open, 200);
      // Without the wait, close() resolved at once, with the write still to come.
      expect(await closed).toBe(true);
      // The write itself was refused by the run's deadline: the agent was told TimeoutError.
      expect(await storage.artifacts.exists("a")).toBe(false);
    } finally {
      open();
      await session.close();
      await storage.close();
      await rm(base, { recursive: true, force: true, maxRetries: 5 });
    }
  });
});
