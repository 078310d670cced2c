/**
 * Issue 35.6: exit 137 is the memory cap's OOM killer only when the engine or the kernel says so;
 * a guest SIGKILL or process.exit(137) is an ExecutorCrashError naming the exit code (it was
 * reported as "MemoryLimitError … reached 512 MB"). A container OOM-killed during an exec gets a
 * fresh container for the next run. One session (a 96 MB cap) for the file.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerExecutor } from "../../../src/execution/container/executor.js";
import { kernelLogNamesOomKill } from "../../../src/execution/container/oom.js";
import { Session } from "../../../src/session.js";
import { FileStorage } from "../../../src/storage/file/storage.js";
import { ensureTestImage } from "../../helpers/container.js";

let tmp: string;
let s: Session;
let ex: ContainerExecutor;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "tcm-oom-"));
  ex = new ContainerExecutor({ image: await ensureTestImage(), memoryMb: 96, defaultTimeoutMs: 60_000 });
  s = new Session({ storage: new FileStorage({ basePath: path.join(tmp, "store") }), executor: ex });
  await s.start();
}, 240_000);

afterAll(async () => {
  await s?.close();
  await rm(tmp, { recursive: true, force: true, maxRetries: 5 });
});

describe("exit 137 in a container", { timeout: 120_000 }, () => {
  it("a guest SIGKILL is an ExecutorCrashError with the exit code, not a MemoryLimitError", async () => {
    const r = await s.run('process.kill(process.pid, "SIGKILL")');
    expect(r.error?.name).toBe("ExecutorCrashError");
    expect(r.error?.message).toMatch(/exit code 137/);
    expect((await s.run("1 + 1")).value).toBe(2);
  });

  it("a guest whose code closes its connection to the host is an ExecutorCrashError, and the next run gets a fresh container", async () => {
    const r = await s.run(
      "const net = require('node:net'); for (const h of process._getActiveHandles()) if (h instanceof net.Socket && !h._isStdio && h.fd !== 1 && h.fd !== 2) h.destroy(); await new Promise(() => {})",
    );
    expect(r.error?.name).toBe("ExecutorCrashError");
    expect((await s.run("1 + 1")).value).toBe(2);
  });

  it("process.exit(137) is an ExecutorCrashError too", async () => {
    const r = await s.run("process.exit(137)");
    expect(r.error?.name).toBe("ExecutorCrashError");
    expect(r.error?.message).not.toMatch(/memory/i);
  });

  it("the cap's OOM kill is still a MemoryLimitError (the kernel's log names the container)", async () => {
    await s.run("1");
    const id = ex.containerId!;
    const r = await s.run("const hog = []; for (;;) hog.push(Buffer.alloc(1 << 20, 1));");
    expect(r.error?.name).toBe("MemoryLimitError");
    expect(kernelLogNamesOomKill(id)).toBe(true);
    expect((await s.run("2 + 2")).value).toBe(4);
  });

  it("a container OOM-killed during an exec gets a fresh container for the next run", async () => {
    await s.run("1");
    const before = ex.containerId;
    // The exec'd hog and the guest share the cap: the OOM killer may take either; the next run must work.
    await s.exec(["node", "-e", "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));"], { timeoutMs: 60_000 }).catch(() => undefined);
    const r = await s.run("3 + 3");
    expect(r.error).toBeNull();
    expect(r.value).toBe(6);
    if (ex.containerId !== before) expect(r.stdout + r.stderr).not.toMatch(/MemoryLimitError/);
  });
});
