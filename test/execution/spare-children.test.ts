/**
 * Warm session starts by default (issue 42): a SubprocessExecutor that started a child keeps one
 * more child of the same configuration ready (src/execution/subprocess/spare-children.ts). Observed
 * through real processes, never timing: which pid a session's code runs in, which children exist.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive } from "../mcp/harness.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { setSpareChildren, spareChildren } from "../../src/execution/subprocess/spare-children.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { waitFor } from "../helpers/processes.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const CLI = path.join(ROOT, "dist", "cli", "main.js");

let dir: string;
let storage: FileStorage;
const executors: SubprocessExecutor[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-spares-"));
  storage = new FileStorage({ basePath: dir });
  setSpareChildren(true);
});

afterEach(async () => {
  for (const e of executors.splice(0)) await e.close();
  // Off kills the spares this test left; back on for the next test.
  setSpareChildren(false);
  setSpareChildren(true);
  await storage.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** Live child.js processes whose parent is `ppid`. */
function guestChildrenOf(ppid: number): number[] {
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "pid=,stat=,args=", "--ppid", String(ppid)], { encoding: "utf8" });
  } catch {
    return []; // ps exits 1 when there is none
  }
  return out
    .split("\n")
    .filter((line) => line.includes("child.js"))
    .map((line) => line.trim().split(/\s+/))
    .filter(([, stat]) => !stat?.startsWith("Z"))
    .map(([pid]) => Number(pid));
}

/** The harness's liveness check (EPERM counts as alive). */
const alive = isAlive;

async function started(options: ConstructorParameters<typeof SubprocessExecutor>[0] = {}): Promise<SubprocessExecutor> {
  const executor = new SubprocessExecutor(options);
  executors.push(executor);
  await executor.start(storage);
  return executor;
}

/** The one child of ours that belongs to none of `executors`. */
function spareChildPid(): number | undefined {
  const owned = new Set(executors.map((e) => e.pid));
  return guestChildrenOf(process.pid).find((pid) => !owned.has(pid));
}

describe("implicit spare children", { timeout: 90_000 }, () => {
  it("the next session of the same configuration runs in the spare the first one left, and one spare follows it", async () => {
    const first = await started();
    await waitFor(() => spareChildren().ready === 1, "a ready spare", 30_000);
    const spare = spareChildPid();
    expect(spare).toBeDefined();
    const second = await started();
    expect(second.pid).toBe(spare);
    expect((await second.run("process.pid")).value).toBe(spare);
    expect((await first.run("1 + 1")).value).toBe(2);
    // Bounded: one spare for the configuration, started after the second session's.
    await waitFor(() => spareChildren().ready === 1, "the next spare", 30_000);
    expect(guestChildrenOf(process.pid).length).toBe(3);
  });

  it("a session started while the spare is still starting waits for that one instead of starting a second", async () => {
    await started();
    await waitFor(() => spareChildren().starting === 1, "a spare being started", 30_000, 1);
    const starting = spareChildPid();
    expect(starting).toBeDefined();
    const second = await started();
    expect(second.pid).toBe(starting);
  });

  it("a configuration that differs (another environment) does not take the spare", async () => {
    await started();
    await waitFor(() => spareChildren().ready === 1, "a ready spare", 30_000);
    const spare = spareChildPid();
    const other = await started({ env: { ...(process.env as Record<string, string>), TCM_SPARE_TEST: "other" } });
    expect(other.pid).not.toBe(spare);
    expect(alive(spare as number)).toBe(true);
  });

  it("an untaken spare is killed once idle for idleMs", async () => {
    setSpareChildren(true, { idleMs: 300 });
    await started();
    await waitFor(() => spareChildren().starting === 1, "a spare being started", 30_000, 1);
    const spare = spareChildPid() as number;
    expect(spare).toBeDefined();
    await waitFor(() => !alive(spare) && spareChildren().ready + spareChildren().starting === 0, "the idle spare to be killed", 30_000);
  });

  it("spareChild: false starts none", async () => {
    const executor = await started({ spareChild: false });
    await executor.run("1 + 1");
    await new Promise((r) => setImmediate(r));
    expect(spareChildren()).toEqual({ ready: 0, starting: 0, scheduled: 0 });
  });

  it("a spare never keeps its host alive, and dies with it", async () => {
    const script = `
      const { FileStorage, Session, spareChildren } = await import(${JSON.stringify(path.join(ROOT, "dist", "index.js"))});
      const session = new Session({ storage: new FileStorage({ basePath: ${JSON.stringify(dir)} }) });
      await session.start();
      await session.run("1 + 1");
      await session.close();
      while (spareChildren().ready < 1) await new Promise((r) => setTimeout(r, 10));
      console.log("spare ready");
      // Nothing else to do: the process must end by itself although the spare is running.
    `;
    const host = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    host.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    let spare: number | undefined;
    await waitFor(
      () => {
        spare ??= guestChildrenOf(host.pid as number)[0];
        return out.includes("spare ready") || host.exitCode !== null;
      },
      "the host to report its spare",
      30_000,
    );
    const code = await new Promise<number | null>((resolve) => (host.exitCode !== null ? resolve(host.exitCode) : host.once("exit", (c) => resolve(c))));
    expect(code).toBe(0);
    expect(spare).toBeDefined();
    await waitFor(() => !alive(spare as number), "the spare to die with its host", 30_000);
  });

  it("the CLI's `run` starts no spare it would never use", async () => {
    const cli = spawn(process.execPath, [CLI, "run", "--base", dir, "await new Promise((r) => setTimeout(r, 3000)); 1"], { stdio: ["ignore", "pipe", "pipe"] });
    let most = 0;
    const exited = new Promise<number | null>((resolve) => cli.once("exit", (c) => resolve(c)));
    let done = false;
    void exited.then(() => (done = true));
    while (!done) {
      most = Math.max(most, guestChildrenOf(cli.pid as number).length);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await exited).toBe(0);
    // The session's own child only (without the guard a spare starts ~50 ms after the session's).
    expect(most).toBe(1);
  });
});
